//! `tool list` and `bundle list`: filters (bundles, tags, disabled) and paging with opaque
//! tokens whose order holds while the catalog changes between pages.

use crate::common::{TestEnv, ToolList, tool_doc, tool_doc_with};
use serde_json::json;

/// Walk every page of `tool list EXTRA --page-size SIZE`, returning the refs in order.
/// `between` runs after each page (to change the catalog mid-walk).
fn walk(env: &TestEnv, size: &str, extra: &[&str], mut between: impl FnMut(usize)) -> Vec<String> {
    let mut refs = Vec::new();
    let mut token: Option<String> = None;
    for page in 0.. {
        assert!(page < 100, "paging does not end");
        let mut args = vec!["--page-size", size];
        args.extend_from_slice(extra);
        if let Some(token) = &token {
            args.extend(["--page-token", token.as_str()]);
        }
        let list: ToolList = env.tool_list(&args);
        assert!(list.items.len() <= size.parse().unwrap());
        refs.extend(list.items.into_iter().map(|t| t.reference));
        between(page);
        match list.next_page_token {
            Some(next) => token = Some(next),
            None => break,
        }
    }
    refs
}

fn catalog_with_tools(n: usize) -> TestEnv {
    let env = TestEnv::new();
    env.bundle("w");
    for i in 0..n {
        env.put_tool("w", &tool_doc(&format!("t{i:02}"), "v1"));
    }
    env
}

#[test]
fn paging_collects_every_tool_once_in_order() {
    let env = catalog_with_tools(8);
    let all = env.refs(&[]);
    assert_eq!(all.len(), 11, "8 tools and 3 built-ins: {all:?}");
    let mut sorted = all.clone();
    sorted.sort();
    assert_eq!(all, sorted, "bundle, slug, version order");

    for size in ["1", "3", "4", "11", "50"] {
        assert_eq!(walk(&env, size, &[], |_| {}), all, "page size {size}");
    }
    // The last full page carries no token when nothing follows.
    let list = env.tool_list(&["--page-size", "11"]);
    assert_eq!(list.next_page_token, None);

    // The human form says how to get the next page, on stderr: stdout is the table alone.
    let run = env.run(&["tool", "list", "--page-size", "3"]);
    run.success();
    let token = env
        .tool_list(&["--page-size", "3"])
        .next_page_token
        .unwrap();
    assert_eq!(
        run.stderr,
        format!("more: --page-token {token} (or --all)\n"),
        "{run}"
    );
    assert_eq!(run.stdout.lines().count(), 4, "{run}");
    let quiet = env.run(&["-q", "tool", "list", "--page-size", "3"]);
    assert_eq!(quiet.success().stderr, "");

    // --all: every page, from a token on too.
    let every = env.tool_list(&["--all"]);
    assert_eq!(every.next_page_token, None);
    assert_eq!(
        every
            .items
            .iter()
            .map(|t| t.reference.clone())
            .collect::<Vec<_>>(),
        all
    );
    let rest = env.tool_list(&["--all", "--page-token", &token]);
    assert_eq!(rest.items.len(), all.len() - 3);
    let run = env.run(&["tool", "list", "--all"]);
    assert_eq!(
        (run.success().stdout.lines().count(), run.stderr.as_str()),
        (all.len() + 1, "")
    );
    env.run(&["tool", "list", "--all", "--page-size", "2"])
        .failure(2);
}

#[test]
fn paging_with_filters() {
    let env = catalog_with_tools(7);
    let filtered = env.refs(&["--bundle", "w"]);
    assert_eq!(filtered.len(), 7);
    assert_eq!(walk(&env, "2", &["--bundle", "w"], |_| {}), filtered);
}

#[test]
fn a_token_only_works_with_the_filters_it_was_made_for() {
    let env = catalog_with_tools(7);
    let token = env
        .tool_list(&["--page-size", "3"])
        .next_page_token
        .unwrap();
    let run = env.run(&[
        "tool",
        "list",
        "--page-size",
        "3",
        "--bundle",
        "w",
        "--page-token",
        &token,
    ]);
    run.failure(3).stderr_has("other filters");
    let err = env.json_error(
        &["tool", "list", "--include-disabled", "--page-token", &token],
        3,
    );
    assert_eq!(err.error.code, "VALIDATION_ERROR");
    // Page size is not a filter: the same walk may change its page size.
    env.run(&["tool", "list", "--page-size", "5", "--page-token", &token])
        .success();
    env.run(&["tool", "list", "--page-token", "not-a-token"])
        .failure(3)
        .stderr_has("page token");
    // A bundle-list token is no tool-list token.
    let bundles = env.json(&["bundle", "list", "--page-size", "1"]);
    let bundle_token = bundles["nextPageToken"].as_str().unwrap();
    env.run(&["tool", "list", "--page-token", bundle_token])
        .failure(3);
}

#[test]
fn page_size_limits() {
    let env = TestEnv::new();
    for size in ["0", "1001"] {
        let run = env.run(&["tool", "list", "--page-size", size]);
        run.failure(3).stderr_has(size).stderr_has("1 to 1000");
        env.run(&["bundle", "list", "--page-size", size]).failure(3);
        assert_eq!(
            env.json_error(&["tool", "list", "--page-size", size], 3)
                .error
                .code,
            "VALIDATION_ERROR"
        );
    }
    env.run(&["tool", "list", "--page-size", "1000"]).success();
    env.run(&["tool", "list", "--page-size", "1"]).success();
    env.run(&["tool", "list", "--page-size", "-1"]).failure(2);
}

#[test]
fn paging_is_stable_while_the_catalog_changes() {
    let env = catalog_with_tools(9);
    let original = env.refs(&[]);
    let mut changed = false;
    let seen = walk(&env, "3", &[], |page| {
        if page == 1 {
            // Between pages 2 and 3: add tools sorting before the cursor (in the bundle
            // walked so far and in an earlier bundle), remove one already seen, add one after.
            env.put_tool("w", &tool_doc("a00", "v1"));
            env.bundle("aaa");
            env.put_tool("aaa", &tool_doc("first", "v1"));
            env.put_tool("w", &tool_doc("t00", "v0"));
            env.run(&["tool", "delete", "w/t01@v1"]).success();
            env.put_tool("w", &tool_doc("zz", "v1"));
            changed = true;
        }
    });
    assert!(changed);
    // Every original item exactly once, in the original order.
    let originals_seen: Vec<_> = seen
        .iter()
        .filter(|r| original.contains(r))
        .cloned()
        .collect();
    assert_eq!(originals_seen, original);
    // What was added after the cursor shows up; what sorts before it does not come back.
    assert!(seen.contains(&"w/zz@v1".to_owned()));
    for before in ["w/a00@v1", "aaa/first@v1"] {
        assert!(!seen.contains(&before.to_owned()), "{seen:?}");
    }
    let mut deduped = seen.clone();
    deduped.dedup();
    assert_eq!(deduped, seen);
}

#[test]
fn bundle_list_pages() {
    let env = TestEnv::new();
    for slug in ["e", "d", "c", "b", "a"] {
        env.bundle(slug);
    }
    let mut slugs = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let mut args = vec!["--page-size", "2"];
        if let Some(t) = &token {
            args.extend(["--page-token", t.as_str()]);
        }
        let page = env.bundle_list(&args);
        assert!(page.items.len() <= 2);
        slugs.extend(page.items.into_iter().map(|b| b.slug));
        match page.next_page_token {
            Some(t) => token = Some(t),
            None => break,
        }
    }
    assert_eq!(slugs, ["a", "b", "builtin", "c", "d", "e"]);
}

#[test]
fn tag_filters_must_all_match() {
    let env = TestEnv::new();
    env.bundle("w");
    for (slug, tags) in [
        ("both", json!(["a", "b"])),
        ("only-a", json!(["a"])),
        ("only-b", json!(["b", "x"])),
        ("none", json!([])),
    ] {
        env.put_tool("w", &tool_doc_with(slug, "v1", json!({ "tags": tags })));
    }
    assert_eq!(env.refs(&["--tag", "a"]), ["w/both@v1", "w/only-a@v1"]);
    assert_eq!(env.refs(&["--tag", "a", "--tag", "b"]), ["w/both@v1"]);
    assert_eq!(env.refs(&["--tag", "b", "--tag", "a"]), ["w/both@v1"]);
    assert_eq!(env.refs(&["--tag", "nope"]), Vec::<String>::new());
    assert_eq!(
        env.refs(&["--tag", "A"]),
        Vec::<String>::new(),
        "tags are exact"
    );
    assert_eq!(
        env.refs(&["--tag", "files"]),
        ["builtin/file-search@v1", "builtin/readfile@v1"]
    );
    let list = env.tool_list(&["--tag", "b"]);
    let tags: Vec<_> = list.items.iter().map(|t| t.tags.clone()).collect();
    assert_eq!(tags, [vec!["a", "b"], vec!["b", "x"]]);
}

#[test]
fn bundle_filters_are_repeatable_by_slug_or_id() {
    let env = TestEnv::new();
    env.bundle("a");
    env.bundle("b");
    let c = env.bundle("c");
    for bundle in ["a", "b", "c"] {
        env.put_tool(bundle, &tool_doc("t", "v1"));
    }
    assert_eq!(env.refs(&["--bundle", "a"]), ["a/t@v1"]);
    assert_eq!(
        env.refs(&["--bundle", "a", "--bundle", &c]),
        ["a/t@v1", "c/t@v1"]
    );
    assert_eq!(
        env.refs(&["--bundle", "builtin"]),
        [
            "builtin/file-search@v1",
            "builtin/now@v1",
            "builtin/readfile@v1"
        ]
    );
    env.run(&["tool", "list", "--bundle", "nope"])
        .failure(4)
        .stderr_has("bundle 'nope' not found");

    let bundles = env.bundle_list(&["--bundle", "b", "--bundle", &c]);
    let slugs: Vec<_> = bundles.items.iter().map(|b| b.slug.as_str()).collect();
    assert_eq!(slugs, ["b", "c"]);
    assert_eq!(bundles.items[0].tool_count, Some(1));
}

#[test]
fn include_disabled_shows_disabled_tools_and_bundles() {
    let env = TestEnv::new();
    env.bundle("on");
    env.bundle("off");
    env.put_tool("on", &tool_doc("live", "v1"));
    env.put_tool(
        "on",
        &tool_doc_with("sleeping", "v1", json!({ "isEnabled": false })),
    );
    env.put_tool("off", &tool_doc("t", "v1"));
    env.run(&["bundle", "disable", "off"]).success();

    assert_eq!(
        env.refs(&["--bundle", "on", "--bundle", "off"]),
        ["on/live@v1"]
    );
    let all = env.tool_list(&["--include-disabled", "--bundle", "on", "--bundle", "off"]);
    let status: Vec<_> = all
        .items
        .iter()
        .map(|t| (t.reference.as_str(), t.status.as_str()))
        .collect();
    assert_eq!(
        status,
        [
            ("off/t@v1", "bundle disabled"),
            ("on/live@v1", "enabled"),
            ("on/sleeping@v1", "disabled"),
        ]
    );
}

#[test]
fn a_bad_page_size_or_token_is_named_by_its_flag() {
    let env = catalog_with_tools(2);
    env.run(&["tool", "list", "--page-size", "0"])
        .failure(3)
        .stderr_has("error: --page-size: 0 is out of range; a page holds 1 to ");
    env.run(&["tool", "list", "--page-token", "@@@"])
        .failure(3)
        .stderr_has("error: --page-token: not a page token from toolctl");
}
