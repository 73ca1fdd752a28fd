//! Exported tool names: one name per tool slug of a bundle, valid for every provider, unique
//! in the catalog, and the same every time for the same catalog.
//!
//! Providers want `^[a-zA-Z0-9_-]{1,64}$` (OpenAI, Anthropic; Gemini and MCP allow a superset),
//! so one form serves all:
//! 1. the tool's slug transliterated to ASCII (`météo` → `meteo`, `日本語` → `RiBenYu`) and
//!    every other character outside `[A-Za-z0-9_-]` turned into `_`, with a `_` in front of
//!    one that starts with a digit or `-` (`3d-render` → `_3d-render`: Gemini wants a name
//!    to start with a letter or an underscore, and refuses the whole request otherwise);
//! 2. prefixed by its bundle's slug and `__` only when another live bundle has a tool of the
//!    same slug (`weather__search`, `web__search`), since a bare slug then names two tools;
//! 3. cut to 64 characters;
//! 4. names that still collide (after cutting, or `_` standing for different characters), and
//!    names that are another tool's slug, all get `_` and the first hex digits of the SHA-256
//!    of `bundle/slug`, with the name cut so the whole stays within 64 characters.
//!
//! The map is built over every tool of every live bundle, disabled ones included, so enabling
//! or disabling a tool never renames another; adding a bundle with an existing slug does (the
//! bare slug would be ambiguous). Nothing depends on the order tools are listed in.

use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// The longest exported name.
pub const MAX_NAME: usize = 64;

/// Digits of the SHA-256 suffix tried first; more when even those collide.
const SUFFIX_DIGITS: usize = 6;

/// A tool slug of a bundle: what one exported name stands for.
pub type Key = (String, String);

/// `text` in the exported alphabet: transliterated to ASCII (`météo` → `meteo`, `日本語` →
/// `RiBenYu`, `Ωmega` → `Omega`, by `any_ascii`), anything else outside `[A-Za-z0-9_-]` turned
/// into `_`, a `_` in front when it would start with a digit or `-`, at most [`MAX_NAME`]
/// characters. Never empty for non-empty input.
pub fn sanitize(text: &str) -> String {
    let name = alphabet(text);
    match name.bytes().next() {
        Some(first) if !starts_a_name(first) => {
            let mut led = String::with_capacity(name.len() + 1);
            led.push('_');
            led.push_str(&name);
            led.truncate(MAX_NAME);
            led
        }
        _ => name,
    }
}

/// [`sanitize`] without the rule for the first character: a part of a name.
fn alphabet(text: &str) -> String {
    let name: String = ascii(text)
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b == b'_' || b == b'-' {
                b as char
            } else {
                '_'
            }
        })
        .take(MAX_NAME)
        .collect();
    // A character with no ASCII form at all still stands as `_`.
    if name.is_empty() && !text.is_empty() {
        return "_".to_owned();
    }
    name
}

/// `text` transliterated to ASCII (`any_ascii`); ASCII text as it is.
pub fn ascii(text: &str) -> std::borrow::Cow<'_, str> {
    if text.is_ascii() {
        std::borrow::Cow::Borrowed(text)
    } else {
        std::borrow::Cow::Owned(any_ascii::any_ascii(text))
    }
}

/// The name a tool slug of a bundle asks for (rules 1 to 3): its slug, or with `shared` (another
/// live bundle has a tool of the same slug) its bundle's slug, `__` and its slug.
pub fn wanted(bundle: &str, slug: &str, shared: bool) -> String {
    if shared {
        sanitize(&format!("{}__{}", alphabet(bundle), alphabet(slug)))
    } else {
        sanitize(slug)
    }
}

/// [`wanted`], without a copy of a slug that is its own name (most are).
fn wanted_cow<'a>(bundle: &str, slug: &'a str, shared: bool) -> std::borrow::Cow<'a, str> {
    if !shared && is_valid(slug) {
        std::borrow::Cow::Borrowed(slug)
    } else {
        std::borrow::Cow::Owned(wanted(bundle, slug, shared))
    }
}

/// Whether `name` is a valid exported name.
pub fn is_valid(name: &str) -> bool {
    (1..=MAX_NAME).contains(&name.len())
        && starts_a_name(name.as_bytes()[0])
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Whether an exported name may start with `b`: a letter or `_` (Gemini's rule; the other
/// providers take any character of the alphabet first).
fn starts_a_name(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

/// The exported names of a catalog, both ways.
#[derive(Debug, Clone, Default)]
pub struct NameMap {
    by_key: HashMap<Key, String>,
    by_name: HashMap<String, Key>,
    /// Names wanted by more than one tool slug (or by one, but equal to another tool's slug),
    /// with the tool slugs that wanted them: each got a suffixed name instead (rule 4).
    collisions: Vec<(String, Vec<Key>)>,
}

impl NameMap {
    /// The names of the tool slugs `keys` (bundle slug, tool slug); repeats are fine.
    pub fn build<'a>(keys: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        // Sorted and deduplicated, so the result cannot depend on the input's order.
        let keys: std::collections::BTreeSet<(&str, &str)> = keys.into_iter().collect();
        let mut bundles_per_slug: HashMap<&str, usize> = HashMap::new();
        for (_, slug) in &keys {
            *bundles_per_slug.entry(slug).or_default() += 1;
        }
        let mut wanted: BTreeMap<String, Vec<(&str, &str)>> = BTreeMap::new();
        for &(bundle, slug) in &keys {
            let name = self::wanted(bundle, slug, bundles_per_slug[slug] > 1);
            wanted.entry(name).or_default().push((bundle, slug));
        }
        let mut map = Self::default();
        let mut colliding = Vec::new();
        for (name, owners) in wanted {
            if !collides(&name, &owners, |name| bundles_per_slug.contains_key(name)) {
                map.insert(name, &owners[0]);
            } else {
                let keys = owners
                    .iter()
                    .map(|(b, s)| ((*b).to_owned(), (*s).to_owned()));
                map.collisions.push((name.clone(), keys.collect()));
                colliding.extend(owners.into_iter().map(|key| (name.clone(), key)));
            }
        }
        for (name, key) in colliding {
            let digest = hex::encode(Sha256::digest(format!("{}/{}", key.0, key.1)));
            let unique = (SUFFIX_DIGITS..=digest.len())
                .map(|digits| {
                    let stem: String = name.chars().take(MAX_NAME - 1 - digits).collect();
                    format!("{stem}_{}", &digest[..digits])
                })
                .find(|candidate| !map.by_name.contains_key(candidate))
                // 64 hex digits of SHA-256 that collide: not a case to plan for, but a name
                // must still come out.
                .unwrap_or_else(|| digest[..MAX_NAME].to_owned());
            map.insert(unique, &key);
        }
        map
    }

    /// The name [`build`](Self::build) gives the tool slug `key` in a catalog, told from the
    /// keys near it, when they are enough to tell it. `near` must hold every key of the catalog
    /// whose slug, or whose name asked for with or without its bundle's slug ([`wanted`]), is
    /// the name `key` asks for; `shared(slug)` says whether more than one bundle has `slug`.
    ///
    /// A name no other key asks for, and that is no other tool's slug, is the name `build`
    /// gives (rules 1 to 3). A name that collides gets a suffix that must not be any other
    /// name of the whole catalog (rule 4): `None` then, and only the whole map can tell.
    pub fn local_name<'a>(
        key: (&str, &str),
        near: impl IntoIterator<Item = (&'a str, &'a str)>,
        shared: impl Fn(&str) -> bool,
    ) -> Option<String> {
        let (bundle, slug) = key;
        let name = wanted(bundle, slug, shared(slug));
        let others: Vec<(&str, &str)> = near.into_iter().filter(|&k| k != key).collect();
        let mut owners = vec![key];
        owners.extend(
            others
                .iter()
                .filter(|&&(b, s)| wanted(b, s, shared(s)) == name),
        );
        let is_slug = |name: &str| others.iter().any(|&(_, s)| s == name);
        (!collides(&name, &owners, is_slug)).then_some(name)
    }

    fn insert(&mut self, name: String, (bundle, slug): &(&str, &str)) {
        let key = ((*bundle).to_owned(), (*slug).to_owned());
        self.by_name.insert(name.clone(), key.clone());
        self.by_key.insert(key, name);
    }

    /// The exported name of a bundle's tool slug.
    pub fn name(&self, bundle: &str, slug: &str) -> Option<&str> {
        self.by_key
            .get(&(bundle.to_owned(), slug.to_owned()))
            .map(String::as_str)
    }

    /// The bundle and tool slug an exported name stands for.
    pub fn resolve(&self, name: &str) -> Option<(&str, &str)> {
        self.by_name
            .get(name)
            .map(|(bundle, slug)| (bundle.as_str(), slug.as_str()))
    }

    /// The names more than one tool slug wanted, with those slugs, in name order. Each of
    /// them is exported under a name with a hash suffix, which a model reads less well than
    /// the tool's own name: `validate` reports them.
    pub fn collisions(&self) -> &[(String, Vec<Key>)] {
        &self.collisions
    }

    pub fn len(&self) -> usize {
        self.by_key.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }
}

/// A collision a change to a catalog's tool slugs brings: the name more than one tool slug
/// wants (or one, and it is another tool's slug), with those tool slugs in order.
pub type Collision = (String, Vec<Key>);

/// The collision that `after` (a catalog's tool slugs after a change) has and `before` did
/// not: the first, in name order, of [`NameMap::build`]'s collisions of `after` that holds a
/// tool slug none of `before`'s collisions held. Collisions a catalog already had (hand edits,
/// `git pull`) are left alone.
pub fn new_collision(before: &BTreeSet<Key>, after: &BTreeSet<Key>) -> Option<Collision> {
    let colliding = |keys: &BTreeSet<Key>| {
        NameMap::build(keys.iter().map(|(b, s)| (b.as_str(), s.as_str())))
            .collisions()
            .to_vec()
    };
    let old: BTreeSet<Key> = colliding(before)
        .into_iter()
        .flat_map(|(_, keys)| keys)
        .collect();
    colliding(after)
        .into_iter()
        .find(|(_, keys)| keys.iter().any(|k| !old.contains(k)))
}

/// [`new_collision`] of a change that only adds tool slugs (`added` to `before`, a catalog's
/// tool slugs, each once: a new slug, an import, a restored bundle), from the names the added
/// slugs can change, not the names of the whole catalog twice.
///
/// Adding `(bundle, slug)` changes the owners of the name it wants; when `slug` was in one
/// bundle before, that bundle's tool now wants its prefixed name instead of the bare one; and
/// when `slug` is new to the catalog, a name that is `slug` collides now. Every other name has
/// the same owners and the same standing before and after, so a collision there is an old
/// one. Each of those few names is still told from every tool slug of the catalog, in one pass
/// that hashes each tool slug once (a catalog of 10,000 tools has 10,000).
pub fn new_collision_adding<'a>(
    before: impl IntoIterator<Item = (&'a str, &'a str)>,
    added: &'a [Key],
) -> Option<Collision> {
    /// How many bundles have one tool slug, before and after; for a slug the change adds, the
    /// bundles that had it before.
    #[derive(Default)]
    struct Count<'k> {
        before: usize,
        after: usize,
        added: bool,
        bundles: Vec<&'k str>,
    }
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut counts: Vec<Count> = Vec::new();
    let mut slot = |slug: &'a str, counts: &mut Vec<Count<'a>>| {
        *index.entry(slug).or_insert_with(|| {
            counts.push(Count::default());
            counts.len() - 1
        })
    };
    let added: BTreeSet<(&str, &str)> = added
        .iter()
        .map(|(b, s)| (b.as_str(), s.as_str()))
        .collect();
    for &(_, slug) in &added {
        let at = slot(slug, &mut counts);
        counts[at].added = true;
    }
    let known: Vec<(&str, &str, usize)> = before
        .into_iter()
        .map(|(bundle, slug)| {
            let at = slot(slug, &mut counts);
            let count = &mut counts[at];
            count.before += 1;
            if count.added {
                count.bundles.push(bundle);
            }
            (bundle, slug, at)
        })
        .collect();
    let added: Vec<(&str, &str, usize)> = added
        .into_iter()
        .filter_map(|(bundle, slug)| {
            let at = index.get(slug).copied()?;
            (!counts[at].bundles.contains(&bundle)).then_some((bundle, slug, at))
        })
        .collect();
    if added.is_empty() {
        return None;
    }
    for count in &mut counts {
        count.after = count.before;
    }
    for &(_, _, at) in &added {
        counts[at].after += 1;
    }
    let shared_before = |at: usize| counts[at].before > 1;
    let shared_after = |at: usize| counts[at].after > 1;

    // The names whose owners or standing the added slugs can change, in name order.
    let mut names: Vec<String> = Vec::new();
    for &(bundle, slug, at) in &added {
        names.push(wanted(bundle, slug, shared_after(at)));
        if counts[at].before == 0 {
            names.push(slug.to_owned());
        }
        if shared_before(at) != shared_after(at) {
            for other in &counts[at].bundles {
                names.push(wanted(other, slug, false));
                names.push(wanted(other, slug, true));
            }
        }
    }
    names.sort();
    names.dedup();
    let find = |name: &str| names.binary_search_by(|n| n.as_str().cmp(name)).ok();

    // Their owners before and after, told from every tool slug.
    let mut owners_before: Vec<Vec<(&str, &str)>> = vec![Vec::new(); names.len()];
    let mut owners_after: Vec<Vec<(&str, &str)>> = vec![Vec::new(); names.len()];
    for &(bundle, slug, at) in &known {
        let name = wanted_cow(bundle, slug, shared_before(at));
        let found = find(&name);
        if let Some(i) = found {
            owners_before[i].push((bundle, slug));
        }
        let found = if shared_before(at) == shared_after(at) {
            found
        } else {
            find(&wanted(bundle, slug, true))
        };
        if let Some(i) = found {
            owners_after[i].push((bundle, slug));
        }
    }
    for &(bundle, slug, at) in &added {
        if let Some(i) = find(&wanted_cow(bundle, slug, shared_after(at))) {
            owners_after[i].push((bundle, slug));
        }
    }
    // Rule 4 as `NameMap::build` applies it, with the catalog's slugs before or after.
    let is_slug = |name: &str, after: bool| {
        index.get(name).is_some_and(|&at| {
            let count = &counts[at];
            (if after { count.after } else { count.before }) > 0
        })
    };
    let collides = |name: &str, owners: &[(&str, &str)], after: bool| {
        collides(name, owners, |name| is_slug(name, after))
    };
    let old: HashSet<(&str, &str)> = names
        .iter()
        .zip(&owners_before)
        .filter(|(name, owners)| collides(name, owners, false))
        .flat_map(|(_, owners)| owners.iter().copied())
        .collect();
    names
        .iter()
        .zip(&mut owners_after)
        .find_map(|(name, owners)| {
            owners.sort();
            let new = owners.iter().any(|key| !old.contains(key));
            (new && collides(name, owners, true)).then(|| {
                let keys = owners
                    .iter()
                    .map(|(b, s)| ((*b).to_owned(), (*s).to_owned()));
                (name.clone(), keys.collect())
            })
        })
}

/// Rule 4's test, the one place it is written: whether `name`, which the tool slugs `owners`
/// want, must take a hash suffix. It must when several want it, or when one does and it is
/// another tool's slug (`meteo` for `météo` beside a bundle's `meteo`), which `invoke` would
/// read as that slug. `is_slug(name)` says whether some tool of the catalog has the slug `name`.
fn collides(name: &str, owners: &[(&str, &str)], is_slug: impl FnOnce(&str) -> bool) -> bool {
    match owners {
        [] => false,
        [(_, slug)] => name != *slug && is_slug(name),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn names(keys: &[(&str, &str)]) -> Vec<String> {
        let map = NameMap::build(keys.iter().copied());
        keys.iter()
            .map(|(b, s)| map.name(b, s).unwrap().to_owned())
            .collect()
    }

    #[test]
    fn a_slug_of_one_bundle_is_its_own_name() {
        assert_eq!(
            names(&[("weather", "forecast"), ("builtin", "file-search")]),
            ["forecast", "file-search"]
        );
    }

    #[test]
    fn a_slug_in_two_bundles_is_prefixed_by_bundle() {
        assert_eq!(
            names(&[("web", "search"), ("news", "search"), ("web", "fetch")]),
            ["web__search", "news__search", "fetch"]
        );
    }

    #[test]
    fn characters_providers_refuse_are_replaced() {
        assert_eq!(sanitize("météo"), "meteo");
        assert_eq!(sanitize("天气-v2"), "TianQi-v2");
        assert_eq!(sanitize("日本語"), "RiBenYu");
        assert_eq!(sanitize("Ωmega"), "Omega");
        assert_eq!(sanitize("Ångström-2"), "Angstrom-2");
        // any_ascii spells emoji out.
        assert_eq!(sanitize("\u{1F600}"), "_grinning_");
        assert_eq!(sanitize("a.b:c d/e"), "a_b_c_d_e");
        assert_eq!(sanitize(&"x".repeat(100)).len(), MAX_NAME);
    }

    /// Gemini refuses a function name that does not start with a letter or `_`.
    #[test]
    fn a_name_starts_with_a_letter_or_an_underscore() {
        assert_eq!(sanitize("3d-render"), "_3d-render");
        assert_eq!(sanitize("-ops"), "_-ops");
        assert_eq!(sanitize("_x"), "_x");
        let long = sanitize(&"9".repeat(100));
        assert_eq!((long.len(), &long[..2]), (MAX_NAME, "_9"));
        assert!(!is_valid("3d") && !is_valid("-x") && is_valid("_3d") && is_valid("d3"));
        assert_eq!(
            names(&[("web", "3d"), ("art", "3d"), ("2d", "x"), ("2d", "y")]),
            ["web__3d", "art__3d", "x", "y"]
        );
        assert_eq!(names(&[("2d", "x"), ("3d", "x")]), ["_2d__x", "_3d__x"]);
        assert_eq!(names(&[("b", "4k")]), ["_4k"]);
    }

    #[test]
    fn collisions_get_a_stable_suffix_within_64_characters() {
        let long_a = format!("{}a", "x".repeat(70));
        let long_b = format!("{}b", "x".repeat(70));
        let got = names(&[
            ("b1", &long_a),
            ("b1", &long_b),
            ("b1", "天气"),
            ("b1", "天氣"),
        ]);
        assert!(got.iter().all(|n| is_valid(n)), "{got:?}");
        let unique: std::collections::HashSet<_> = got.iter().collect();
        assert_eq!(unique.len(), 4, "{got:?}");
        assert_eq!(got[0].len(), MAX_NAME);
        assert!(got[0].starts_with("xxxx") && got[0].as_bytes()[57] == b'_');
        // Simplified and traditional spellings transliterate alike: both get a suffix.
        assert!(got[2].starts_with("TianQi_") && got[3].starts_with("TianQi_"));
        // The same catalog, listed in another order, gives the same names.
        let again = names(&[
            ("b1", "天氣"),
            ("b1", "天气"),
            ("b1", &long_b),
            ("b1", &long_a),
        ]);
        assert_eq!(
            again,
            [
                got[3].clone(),
                got[2].clone(),
                got[1].clone(),
                got[0].clone()
            ]
        );
    }

    #[test]
    fn a_prefixed_name_fits_in_64_characters() {
        let bundle = "b".repeat(64);
        let got = names(&[(&bundle, "search"), ("web", "search")]);
        assert!(got.iter().all(|n| is_valid(n)), "{got:?}");
        assert_eq!(got[1], "web__search");
    }

    #[test]
    fn a_name_that_is_another_tools_slug_gets_a_suffix() {
        let got = names(&[("a", "meteo"), ("b", "meteo"), ("c", "météo")]);
        assert_eq!(got[..2], ["a__meteo", "b__meteo"]);
        assert!(
            got[2].starts_with("meteo_") && got[2].len() == 12,
            "{got:?}"
        );
    }

    #[test]
    fn names_resolve_back() {
        let map = NameMap::build([("web", "search"), ("news", "search"), ("web", "fetch")]);
        assert_eq!(map.resolve("news__search"), Some(("news", "search")));
        assert_eq!(map.resolve("fetch"), Some(("web", "fetch")));
        assert_eq!(map.resolve("search"), None);
        assert_eq!(map.len(), 3);
    }

    #[test]
    fn slugs_added_together_can_make_an_old_name_another_tools_slug() {
        // `e` in two bundles at once: both prefixed, and `é`'s name `e` is a slug now.
        let key = |b: &str, s: &str| (b.to_owned(), s.to_owned());
        let before = [key("z", "é")];
        let added = [key("x", "e"), key("y", "e")];
        let found =
            new_collision_adding(before.iter().map(|(b, s)| (b.as_str(), s.as_str())), &added);
        assert_eq!(found, Some(("e".to_owned(), vec![key("z", "é")])));
        let after: BTreeSet<Key> = before.iter().chain(&added).cloned().collect();
        assert_eq!(found, new_collision(&before.into_iter().collect(), &after));
    }

    proptest! {
        /// Few letters, so that slugs are shared and names collide often.
        #[test]
        fn a_name_told_from_the_keys_near_it_is_the_name_in_the_whole_map(
            keys in proptest::collection::vec(("[a-bé]{1,2}", "[a-bé天-]{1,3}"), 1..30)
        ) {
            let keys: Vec<(&str, &str)> = keys.iter().map(|(b, s)| (b.as_str(), s.as_str())).collect();
            let map = NameMap::build(keys.iter().copied());
            let bundles = |slug: &str| {
                keys.iter().filter(|k| k.1 == slug).map(|k| k.0).collect::<std::collections::HashSet<_>>()
            };
            for &key in &keys {
                let local = NameMap::local_name(key, keys.iter().copied(), |slug| bundles(slug).len() > 1);
                let collides = map.collisions().iter().any(|(_, owners)| {
                    owners.iter().any(|(b, s)| (b.as_str(), s.as_str()) == key)
                });
                prop_assert_eq!(local.is_none(), collides, "{:?}", key);
                if let Some(name) = local {
                    prop_assert_eq!(Some(name.as_str()), map.name(key.0, key.1));
                }
            }
        }

        /// Few letters, bundles and slugs alike (a slug that is another's name, `é` exported
        /// as `e`), so that adding slugs shares, prefixes and collides often.
        #[test]
        fn a_collision_told_from_the_added_slugs_is_the_one_the_whole_map_finds(
            before in proptest::collection::vec(("[ab_]{1,2}", "[abeé_]{1,4}"), 0..25),
            added in proptest::collection::vec(("[ab_]{1,2}", "[abeé_]{1,3}"), 1..4)
        ) {
            let key = |(b, s): &(String, String)| (b.clone(), s.clone());
            let old: BTreeSet<Key> = before.iter().map(key).collect();
            let mut new = old.clone();
            new.extend(added.iter().map(key));
            let added: Vec<Key> = added.iter().map(key).collect();
            prop_assert_eq!(
                new_collision_adding(old.iter().map(|(b, s)| (b.as_str(), s.as_str())), &added),
                new_collision(&old, &new)
            );
        }

        #[test]
        fn every_name_is_valid_unique_and_resolves_back(
            keys in proptest::collection::vec(("[a-zé天-]{1,70}", "[a-zA-Z0-9é天-]{1,70}"), 1..40)
        ) {
            let map = NameMap::build(keys.iter().map(|(b, s)| (b.as_str(), s.as_str())));
            let mut seen = std::collections::HashSet::new();
            for (bundle, slug) in &keys {
                let name = map.name(bundle, slug).unwrap();
                prop_assert!(is_valid(name), "{name}");
                prop_assert_eq!(map.resolve(name), Some((bundle.as_str(), slug.as_str())));
                seen.insert((name.to_owned(), bundle.clone(), slug.clone()));
            }
            let names: std::collections::HashSet<_> = seen.iter().map(|s| &s.0).collect();
            prop_assert_eq!(names.len(), seen.len());
        }
    }
}
