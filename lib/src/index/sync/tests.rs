//! Tests of [`sync`](super).

use super::{Facts, MAX_SCOPES, Scope, scopes_of, stamp_is, write_stamp};
use proptest::prelude::*;

fn scopes(paths: &[&str]) -> Option<Vec<Scope>> {
    let paths: Vec<String> = paths.iter().map(|p| (*p).to_owned()).collect();
    scopes_of(&paths).map(|s| s.into_iter().collect())
}

#[test]
fn a_changed_path_is_checked_with_its_folder() {
    let bundle = |b: &str| Scope::Bundle(b.to_owned());
    let slug = |b: &str, s: &str| Scope::Slug(b.to_owned(), s.to_owned());
    let tool = |p: &str| Scope::Tool(p.to_owned());
    // bundles/ itself: everything.
    assert_eq!(scopes(&["bundles"]), None);
    // A bundle folder, its bundle.json or tools/, a slug folder: the bundle.
    for path in [
        "bundles/b",
        "bundles/b/bundle.json",
        "bundles/b/tools",
        "bundles/b/tools/s",
    ] {
        assert_eq!(scopes(&[path]), Some(vec![bundle("b")]), "{path}");
    }
    // A version folder: its slug folder's listing.
    assert_eq!(
        scopes(&["bundles/b/tools/s/v1"]),
        Some(vec![slug("b", "s")])
    );
    // Anything in a version folder: its tool file.
    for path in [
        "bundles/b/tools/s/v1/tool.json",
        "bundles/b/tools/s/v1/.tool.json.swp",
    ] {
        assert_eq!(
            scopes(&[path]),
            Some(vec![tool("bundles/b/tools/s/v1/tool.json")]),
            "{path}"
        );
    }
    // What the index never reads, and paths outside bundles/.
    for path in [
        "bundles/b/docs/readme.md",
        "bundles/b/tools/s/v1/assets/icon.png",
        "toolctl.json",
        ".toolctl/watch/cookie-1",
    ] {
        assert_eq!(scopes(&[path]), Some(vec![]), "{path}");
    }
    // Narrow scopes inside wider ones are left to them.
    assert_eq!(
        scopes(&[
            "bundles/b/tools/s/v1/tool.json",
            "bundles/b/tools/s/v2",
            "bundles/c/tools/t/v1/tool.json",
            "bundles/c/tools/t/v1",
            "bundles/c/tools/u/v1/tool.json",
            "bundles/b/bundle.json",
        ]),
        Some(vec![
            bundle("b"),
            slug("c", "t"),
            tool("bundles/c/tools/u/v1/tool.json"),
        ])
    );
    // Past MAX_SCOPES, one walk.
    let many: Vec<String> = (0..=MAX_SCOPES)
        .map(|i| format!("bundles/b{i}/bundle.json"))
        .collect();
    assert_eq!(scopes_of(&many), None);
    assert!(scopes_of(&many[1..]).is_some());
}

fn written(facts: Option<Facts>, racy_from: i128) -> String {
    let mut out = String::from("left over");
    write_stamp(facts, racy_from, &mut out);
    out
}

proptest! {
    #[test]
    fn a_stamp_is_what_is_written_for_it(
        mtime in any::<i64>(),
        nanos in 0..1_000_000_000i128,
        len: u64,
        ino: u64,
        racy_from: i64,
    ) {
        let facts = Some((i128::from(mtime) * 1_000_000_000 + nanos, len, ino));
        let racy_from = i128::from(racy_from) * 1_000_000_000;
        let text = written(facts, racy_from);
        prop_assert!(stamp_is(facts, racy_from, &text));
        // Any other text is another stamp.
        for other in [
            String::new(),
            format!("{text}~"),
            text.trim_end_matches('~').to_owned(),
            format!("0{text}"),
            text[..text.len() - 1].to_owned(),
            written(facts.map(|(m, l, i)| (m + 1, l, i)), racy_from),
            written(facts.map(|(m, l, i)| (m, l ^ 1, i)), racy_from),
            written(facts.map(|(m, l, i)| (m, l, i ^ 1)), racy_from),
        ] {
            prop_assert_eq!(stamp_is(facts, racy_from, &other), other == text, "{}", other);
        }
        prop_assert!(stamp_is(None, racy_from, ""));
        prop_assert!(!stamp_is(None, racy_from, &text));
    }
}
