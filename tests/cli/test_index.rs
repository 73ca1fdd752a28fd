//! The search index (README "Search"): derived state in `.toolctl/` that follows the
//! files on its own. Hand edits and `git pull` (played here with `std::fs`, as a person with an
//! editor would) show up in the next `search` and `tool list` with nothing run in between; the
//! change check reads only the files that changed; writes through toolctl refresh the index
//! themselves; and an index that is damaged, deleted or of another format is rebuilt, never
//! fatal.

use crate::common::{ProblemItem, Run, TestEnv, ToolItem, read_json, tool_doc_with};
use crate::common::{tool_view, write_file};
use serde::Deserialize;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// `index status --json`, pinned.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct IndexStatus {
    path: Option<PathBuf>,
    format_version: i32,
    tools: u64,
    bundles: u64,
    problems: u64,
    size_bytes: u64,
    pub(crate) last_sync: LastSync,
    /// The watcher (test_watch.rs), when one runs.
    pub(crate) watcher: Option<WatcherStatus>,
}

impl IndexStatus {
    pub(crate) fn problems(&self) -> u64 {
        self.problems
    }
}

/// A running watcher, as `index status` shows it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct WatcherStatus {
    pub(crate) pid: u32,
    pub(crate) folders: usize,
    pub(crate) epoch: String,
    pub(crate) events: u64,
    #[allow(dead_code)]
    pub(crate) started_at: String,
}

/// What the change check of the command did.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct LastSync {
    pub(crate) rebuilt: bool,
    pub(crate) read: usize,
    pub(crate) removed: usize,
    /// Files and folders whose stamps were compared.
    pub(crate) checked: usize,
    /// A watcher said what changed.
    pub(crate) watcher: bool,
    #[allow(dead_code)]
    millis: u64,
}

/// `search --json`, pinned (each item is a tool view plus its rank).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct SearchPage {
    query: String,
    items: Vec<Value>,
    next_page_token: Option<String>,
    corrections: Vec<Value>,
    problems: Vec<ProblemItem>,
}

/// What one search printed.
#[derive(Debug)]
struct Searched {
    run: Run,
    items: Vec<ToolItem>,
    problems: Vec<ProblemItem>,
}

impl Searched {
    fn refs(&self) -> Vec<String> {
        self.items.iter().map(|t| t.reference.clone()).collect()
    }

    fn has(&self, reference: &str) -> bool {
        self.items.iter().any(|t| t.reference == reference)
    }
}

/// `toolctl --json search ARGS… --page-size 1000`: it must exit 0 and print whole tools.
#[track_caller]
fn search(env: &TestEnv, args: &[&str]) -> Searched {
    let mut all = vec!["--json", "search", "--page-size", "1000"];
    all.extend_from_slice(args);
    let run = env.run(&all);
    run.success();
    let page: SearchPage = run.parse();
    assert_eq!(page.next_page_token, None, "{run}");
    assert!(!page.query.is_empty(), "{run}");
    for correction in &page.corrections {
        assert!(correction["typed"].is_string(), "{run}");
        assert!(correction["found"].is_string(), "{run}");
    }
    let items = page
        .items
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            assert_eq!(item["rank"], i + 1, "{run}");
            assert!(item["score"].is_number(), "{run}");
            assert!(item["tier"].is_string(), "{run}");
            assert!(item["why"].is_string(), "{run}");
            tool_view(item, &["rank", "score", "tier", "why"]).0
        })
        .collect();
    Searched {
        items,
        problems: page.problems,
        run,
    }
}

/// The refs `search QUERY` finds (enabled, available tools only).
#[track_caller]
pub(crate) fn found(env: &TestEnv, query: &str) -> Vec<String> {
    search(env, &[query]).refs()
}

/// `index status --json`, which must exit 0.
#[track_caller]
pub(crate) fn status(env: &TestEnv) -> IndexStatus {
    env.run(&["--json", "index", "status"]).success().parse()
}

/// How many tool files the change check of a fresh `index status` read.
#[track_caller]
fn files_read(env: &TestEnv) -> usize {
    status(env).last_sync.read
}

/// The index file of the test's catalog.
fn index_file(env: &TestEnv) -> PathBuf {
    env.catalog().join(".toolctl/index.sqlite")
}

/// A complete `tool.json` written by hand (no toolctl involved) into `bundle_id`.
fn hand_tool(
    env: &TestEnv,
    bundle_id: &str,
    slug: &str,
    version: &str,
    description: &str,
) -> PathBuf {
    let now = jiff::Timestamp::now().to_string();
    let doc = json!({
        "schemaVersion": "1",
        "toolID": uuid::Uuid::now_v7().to_string(),
        "bundleID": bundle_id,
        "slug": slug,
        "version": version,
        "description": description,
        "type": "native",
        "impl": { "func": "now" },
        "argSchema": { "type": "object", "properties": {} },
        "isEnabled": true,
        "createdAt": now,
        "modifiedAt": now
    });
    let path = env.tool_file(bundle_id, slug, version);
    write_file(&path, &serde_json::to_string_pretty(&doc).unwrap());
    path
}

/// Change a JSON file in place, as an editor that writes over the file does (same inode).
fn edit_in_place(path: &Path, edit: impl FnOnce(&mut Value)) {
    let mut doc = read_json(path);
    edit(&mut doc);
    std::fs::write(path, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
}

/// Replace a file the way most editors and git do: write a temporary file beside it, then
/// rename it over the old one (a new inode).
fn replace_by_rename(path: &Path, text: &str) {
    let temp = path.with_file_name(".tool.json.swp");
    std::fs::write(&temp, text).unwrap();
    std::fs::rename(&temp, path).unwrap();
}

/// A tool put through toolctl with this description; returns its toolID.
#[track_caller]
fn put_described(env: &TestEnv, bundle: &str, slug: &str, version: &str, text: &str) -> String {
    let put = env.put_tool(
        bundle,
        &tool_doc_with(slug, version, json!({ "description": text })),
    );
    put["toolID"].as_str().unwrap().to_owned()
}

/// Set a file's or folder's mtime.
fn set_mtime(path: &Path, time: SystemTime) {
    std::fs::File::open(path)
        .unwrap()
        .set_modified(time)
        .unwrap();
}

// ---------------------------------------------------------------------------------------------
// 1. Hand edits are searched at once.

#[test]
fn an_edit_in_place_is_searched_at_once() {
    let env = TestEnv::new();
    let bundle_id = env.bundle("w");
    put_described(&env, "w", "feeder", "v1", "Feeds the aardvark at noon");
    assert_eq!(found(&env, "aardvark"), ["w/feeder@v1"]);

    let file = env.tool_file(&bundle_id, "feeder", "v1");
    edit_in_place(&file, |doc| {
        doc["description"] = "Feeds the quokka at noon".into();
    });

    assert_eq!(found(&env, "quokka"), ["w/feeder@v1"]);
    assert!(found(&env, "aardvark").is_empty());
    let list = env.tool_list(&["--bundle", "w"]);
    assert_eq!(list.items.len(), 1);
    assert_eq!(list.items[0].description, "Feeds the quokka at noon");
    assert!(list.problems.is_empty(), "{:?}", list.problems);
}

#[test]
fn an_editor_replacing_the_file_by_rename_is_searched_at_once() {
    let env = TestEnv::new();
    let bundle_id = env.bundle("w");
    put_described(&env, "w", "feeder", "v1", "Feeds the aardvark at noon");
    assert_eq!(found(&env, "aardvark"), ["w/feeder@v1"]);

    let file = env.tool_file(&bundle_id, "feeder", "v1");
    let mut doc = read_json(&file);
    doc["description"] = "Feeds the wombat at dusk".into();
    doc["tags"] = json!(["marsupials"]);
    replace_by_rename(&file, &serde_json::to_string_pretty(&doc).unwrap());

    assert_eq!(found(&env, "wombat"), ["w/feeder@v1"]);
    assert_eq!(found(&env, "marsupials"), ["w/feeder@v1"]);
    assert!(found(&env, "aardvark").is_empty());
    let list = env.tool_list(&["--bundle", "w"]);
    assert_eq!(list.items[0].description, "Feeds the wombat at dusk");
    assert_eq!(list.items[0].tags, ["marsupials"]);
    // The editor's temporary name is not a tool, and nothing is left of it.
    assert!(!file.with_file_name(".tool.json.swp").exists());
}

#[test]
fn versions_and_slugs_added_by_hand_are_found() {
    let env = TestEnv::new();
    let bundle_id = env.bundle("w");
    put_described(&env, "w", "feeder", "v1", "Feeds the aardvark at noon");
    assert_eq!(found(&env, "aardvark"), ["w/feeder@v1"]);

    // A new version folder, as a `git pull` brings it.
    hand_tool(
        &env,
        &bundle_id,
        "feeder",
        "v2",
        "Feeds the aardvark and the pangolin",
    );
    // A new slug folder.
    hand_tool(
        &env,
        &bundle_id,
        "groomer",
        "v1",
        "Brushes the pangolin scales",
    );

    let pangolin = found(&env, "pangolin");
    assert_eq!(pangolin.len(), 2, "{pangolin:?}");
    assert!(pangolin.contains(&"w/feeder@v2".to_owned()), "{pangolin:?}");
    assert!(
        pangolin.contains(&"w/groomer@v1".to_owned()),
        "{pangolin:?}"
    );
    let aardvark = found(&env, "aardvark");
    assert_eq!(aardvark.len(), 2, "{aardvark:?}");
    assert_eq!(
        env.refs(&["--bundle", "w"]),
        ["w/feeder@v1", "w/feeder@v2", "w/groomer@v1"]
    );
    // `tool get` without a version means the newest: the hand-written one.
    assert_eq!(
        env.json(&["tool", "get", "w/feeder"])["version"],
        "v2",
        "the version added by hand is the newest"
    );
}

#[test]
fn folders_removed_by_hand_take_their_tools_with_them() {
    let env = TestEnv::new();
    let keep = env.bundle("keep");
    let gone = env.bundle("gone");
    put_described(&env, "keep", "one", "v1", "Counts the capybaras");
    put_described(&env, "keep", "one", "v2", "Counts the capybaras twice");
    put_described(&env, "keep", "two", "v1", "Weighs the capybaras");
    put_described(&env, "gone", "three", "v1", "Paints the capybaras");
    put_described(&env, "gone", "four", "v1", "Feeds the capybaras");
    assert_eq!(found(&env, "capybaras").len(), 5);

    // `rm -r` a whole bundle.
    std::fs::remove_dir_all(env.bundle_dir(&gone)).unwrap();
    let refs = found(&env, "capybaras");
    assert_eq!(refs.len(), 3, "{refs:?}");
    assert!(refs.iter().all(|r| r.starts_with("keep/")), "{refs:?}");
    assert!(found(&env, "paints").is_empty());
    assert_eq!(
        env.refs(&[]),
        [
            "builtin/file-search@v1",
            "builtin/now@v1",
            "builtin/readfile@v1",
            "keep/one@v1",
            "keep/one@v2",
            "keep/two@v1"
        ]
    );
    let bundles: Vec<_> = env
        .bundle_list(&["--include-disabled", "--include-deleted"])
        .items
        .into_iter()
        .map(|b| b.slug)
        .collect();
    assert_eq!(bundles, ["builtin", "keep"]);
    env.run(&["search", "capybaras", "--bundle", "gone"])
        .failure(4);

    // `rm -r` one version folder.
    let v2 = env.tool_file(&keep, "one", "v2");
    std::fs::remove_dir_all(v2.parent().unwrap()).unwrap();
    assert!(found(&env, "twice").is_empty());
    assert_eq!(
        env.refs(&["--bundle", "keep"]),
        ["keep/one@v1", "keep/two@v1"]
    );

    // `rm` of a tool.json alone (its version folder stays).
    std::fs::remove_file(env.tool_file(&keep, "two", "v1")).unwrap();
    assert!(found(&env, "weighs").is_empty());
    assert_eq!(found(&env, "capybaras"), ["keep/one@v1"]);
    assert_eq!(env.refs(&["--bundle", "keep"]), ["keep/one@v1"]);
}

#[test]
fn a_slug_folder_renamed_by_hand() {
    let env = TestEnv::new();
    let bundle_id = env.bundle("w");
    put_described(&env, "w", "feeder", "v1", "Feeds the aardvark at noon");
    assert_eq!(found(&env, "aardvark"), ["w/feeder@v1"]);

    // Renaming the folder alone: the file's slug no longer matches it. Reported, left out.
    let old = env.bundle_dir(&bundle_id).join("tools/feeder");
    let new = env.bundle_dir(&bundle_id).join("tools/nourisher");
    std::fs::rename(&old, &new).unwrap();
    let file = new.join("v1/tool.json");
    let searched = search(&env, &["aardvark"]);
    assert!(searched.items.is_empty(), "{}", searched.run);
    assert_eq!(searched.problems.len(), 1, "{}", searched.run);
    assert_eq!(searched.problems[0].path, file);
    searched
        .run
        .stderr_has(file.to_str().unwrap())
        .stderr_has("nourisher");

    // Then the slug in the file too: the tool is back under its new name.
    edit_in_place(&file, |doc| doc["slug"] = "nourisher".into());
    let searched = search(&env, &["aardvark"]);
    assert_eq!(searched.refs(), ["w/nourisher@v1"]);
    assert!(searched.problems.is_empty(), "{}", searched.run);
    assert_eq!(searched.run.stderr, "");
    assert_eq!(found(&env, "nourisher"), ["w/nourisher@v1"]);
    assert_eq!(env.refs(&["--bundle", "w"]), ["w/nourisher@v1"]);
}

#[test]
fn bundle_file_edits_change_what_search_shows() {
    let env = TestEnv::new();
    let bundle_id = env.bundle("w");
    put_described(&env, "w", "feeder", "v1", "Feeds the aardvark at noon");
    assert_eq!(found(&env, "aardvark"), ["w/feeder@v1"]);
    let bundle_file = env.bundle_dir(&bundle_id).join("bundle.json");

    // Disabled by hand: its tools leave the default search, and show as "bundle disabled".
    edit_in_place(&bundle_file, |doc| doc["isEnabled"] = false.into());
    assert!(found(&env, "aardvark").is_empty());
    let all = search(&env, &["aardvark", "--include-disabled"]);
    assert_eq!(all.refs(), ["w/feeder@v1"]);
    assert!(!all.items[0].bundle_enabled);
    assert_eq!(all.items[0].status, "bundle disabled");
    assert!(env.refs(&["--bundle", "w"]).is_empty());

    edit_in_place(&bundle_file, |doc| doc["isEnabled"] = true.into());
    assert_eq!(found(&env, "aardvark"), ["w/feeder@v1"]);

    // Renamed by hand: the tools' references and the bundle words in the index follow.
    edit_in_place(&bundle_file, |doc| doc["slug"] = "kangaroo".into());
    assert_eq!(found(&env, "aardvark"), ["kangaroo/feeder@v1"]);
    assert_eq!(found(&env, "kangaroo"), ["kangaroo/feeder@v1"]);
    let by_bundle = search(&env, &["aardvark", "--bundle", "kangaroo"]);
    assert_eq!(by_bundle.refs(), ["kangaroo/feeder@v1"]);
    assert_eq!(by_bundle.items[0].bundle, "kangaroo");
    env.run(&["search", "aardvark", "--bundle", "w"]).failure(4);
    assert_eq!(env.refs(&["--bundle", "kangaroo"]), ["kangaroo/feeder@v1"]);

    // Soft-deleted by hand: hidden unless asked for.
    edit_in_place(&bundle_file, |doc| {
        doc["softDeletedAt"] = "2025-01-01T00:00:00Z".into();
    });
    assert!(found(&env, "aardvark").is_empty());
    let deleted = search(&env, &["aardvark", "--include-deleted"]);
    assert_eq!(deleted.refs(), ["kangaroo/feeder@v1"]);
    assert_eq!(deleted.items[0].status, "bundle deleted");

    // bundle.json broken by hand: reported, its tools left out, the search still answers.
    std::fs::write(&bundle_file, "{ \"slug\": ").unwrap();
    let broken = search(
        &env,
        &["aardvark", "--include-deleted", "--include-disabled"],
    );
    assert!(broken.items.is_empty(), "{}", broken.run);
    broken.run.stderr_has(bundle_file.to_str().unwrap());
    assert_eq!(found(&env, "readfile"), ["builtin/readfile@v1"]);
}

#[test]
fn allowed_hosts_edits_change_availability() {
    let env = TestEnv::new();
    env.bundle("w");
    let forecast = read_json(Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/examples/forecast.json"
    )));
    // A put refuses a host that is not allowed: allow it, put, then take it back by hand.
    env.edit_config(|c| c["allowedHosts"] = json!(["api.weather.example"]));
    env.put_tool("w", &forecast);
    assert_eq!(found(&env, "forecast"), ["w/forecast@v1"]);
    env.edit_config(|c| c["allowedHosts"] = json!([]));
    // Now unavailable: left out of search, shown with --include-disabled and the reason.
    assert!(found(&env, "forecast").is_empty());
    let all = search(&env, &["forecast", "--include-disabled"]);
    assert_eq!(all.refs(), ["w/forecast@v1"]);
    assert!(!all.items[0].available);
    assert!(
        all.items[0]
            .unavailable_reason
            .as_deref()
            .unwrap()
            .contains("api.weather.example"),
        "{:?}",
        all.items[0]
    );
    assert!(
        all.items[0].status.starts_with("unavailable: "),
        "{:?}",
        all.items[0]
    );

    env.edit_config(|c| c["allowedHosts"] = json!(["api.weather.example"]));
    let searched = search(&env, &["forecast"]);
    assert_eq!(searched.refs(), ["w/forecast@v1"]);
    assert!(searched.items[0].available);
    assert_eq!(searched.items[0].status, "enabled");

    env.edit_config(|c| c["allowedHosts"] = json!([]));
    assert!(found(&env, "forecast").is_empty());
}

#[test]
fn builtin_flags_edited_by_hand_in_the_config() {
    let env = TestEnv::new();
    assert_eq!(found(&env, "readfile"), ["builtin/readfile@v1"]);
    env.edit_config(|c| c["builtin"]["tools"]["readfile"] = json!({ "isEnabled": false }));
    assert!(found(&env, "readfile").is_empty());
    env.edit_config(|c| c["builtin"]["tools"]["exec"] = json!({ "isEnabled": true }));
    assert_eq!(found(&env, "exec"), ["builtin/exec@v1"]);
    env.edit_config(|c| c["builtin"]["isEnabled"] = false.into());
    assert!(found(&env, "exec").is_empty());
    assert!(found(&env, "now").is_empty());
}

// ---------------------------------------------------------------------------------------------
// 2. The change check reads only what changed.

#[test]
fn the_change_check_reads_only_changed_files() {
    let env = TestEnv::new();
    let w = env.bundle("w");
    let x = env.bundle("x");
    for slug in ["a", "b", "c"] {
        put_described(&env, "w", slug, "v1", &format!("tool {slug} of w"));
        put_described(&env, "x", slug, "v1", &format!("tool {slug} of x"));
    }
    search(&env, &["tool"]);

    // Nothing changed: nothing read, nothing removed, no rebuild.
    let idle = status(&env);
    assert_eq!(idle.last_sync.read, 0, "{idle:?}");
    assert_eq!(idle.last_sync.removed, 0, "{idle:?}");
    assert!(!idle.last_sync.rebuilt, "{idle:?}");
    assert_eq!(idle.tools, 6 + 4, "{idle:?}");
    search(&env, &["tool"]);
    search(&env, &["tool"]);
    env.tool_list(&[]);
    assert_eq!(files_read(&env), 0);

    // One file edited in place (another size): exactly that one is read, once.
    edit_in_place(&env.tool_file(&w, "b", "v1"), |doc| {
        doc["description"] = "tool b of w, now longer".into();
    });
    assert_eq!(files_read(&env), 1);
    assert_eq!(files_read(&env), 0);

    // Replaced by rename.
    let file = env.tool_file(&x, "c", "v1");
    let text = std::fs::read_to_string(&file)
        .unwrap()
        .replace("tool c of x", "tool c of x!");
    replace_by_rename(&file, &text);
    assert_eq!(files_read(&env), 1);
    assert_eq!(files_read(&env), 0);

    // A version and a slug added by hand: only the new files are read.
    hand_tool(&env, &w, "a", "v2", "tool a of w, second");
    hand_tool(&env, &w, "d", "v1", "tool d of w");
    assert_eq!(files_read(&env), 2);
    assert_eq!(files_read(&env), 0);

    // A version folder removed: nothing read, one removed.
    std::fs::remove_dir_all(env.tool_file(&w, "a", "v2").parent().unwrap()).unwrap();
    let after = status(&env);
    assert_eq!(
        (after.last_sync.read, after.last_sync.removed),
        (0, 1),
        "{after:?}"
    );

    // bundle.json toggled by hand: no tool file needs reading, yet search follows.
    let bundle_file = env.bundle_dir(&x).join("bundle.json");
    edit_in_place(&bundle_file, |doc| doc["isEnabled"] = false.into());
    assert_eq!(files_read(&env), 0);
    assert!(found(&env, "tool").iter().all(|r| r.starts_with("w/")));

    // A whole bundle removed: its three tools removed, nothing read.
    std::fs::remove_dir_all(env.bundle_dir(&x)).unwrap();
    let after = status(&env);
    assert_eq!(
        (after.last_sync.read, after.last_sync.removed),
        (0, 3),
        "{after:?}"
    );
    assert_eq!(after.tools, 4 + 4, "{after:?}");

    // allowedHosts changed: availability of every tool may change, so each is read again.
    env.edit_config(|c| c["allowedHosts"] = json!(["api.example.com"]));
    assert_eq!(files_read(&env), 4);
    assert_eq!(files_read(&env), 0);
}

#[test]
fn changes_all_over_a_big_catalog_are_each_seen() {
    // More slug folders and tool files than one batch of the change check's stat workers
    // takes (256), so the batches are spread over the workers: each change is seen wherever
    // it falls, first row or last.
    let env = TestEnv::new();
    let w = env.bundle("w");
    let x = env.bundle("x");
    for i in 0..600 {
        hand_tool(&env, &w, &format!("s{i:04}"), "v1", "A tool of the herd");
        if i % 2 == 0 {
            hand_tool(&env, &w, &format!("s{i:04}"), "v2", "A tool of the herd");
        }
    }
    for i in 0..300 {
        hand_tool(&env, &x, &format!("t{i:04}"), "v1", "A tool of the flock");
    }
    let built = status(&env);
    assert_eq!(built.last_sync.read, 1200, "{built:?}");
    assert_eq!(files_read(&env), 0);

    let describe = |text: &'static str| move |doc: &mut Value| doc["description"] = text.into();
    edit_in_place(
        &env.tool_file(&w, "s0000", "v1"),
        describe("Feeds the aardvark"),
    );
    edit_in_place(
        &env.tool_file(&x, "t0299", "v1"),
        describe("Feeds the bobolink"),
    );
    let file = env.tool_file(&w, "s0301", "v1");
    let mut doc = read_json(&file);
    describe("Feeds the wombat")(&mut doc);
    replace_by_rename(&file, &serde_json::to_string_pretty(&doc).unwrap());
    hand_tool(&env, &w, "s0450", "v3", "Feeds the pangolin");
    hand_tool(&env, &x, "t9999", "v1", "Feeds the quokka");
    std::fs::remove_dir_all(env.tool_file(&w, "s0200", "v2").parent().unwrap()).unwrap();
    std::fs::remove_dir_all(env.bundle_dir(&w).join("tools/s0599")).unwrap();

    let after = status(&env);
    assert_eq!(
        (after.last_sync.read, after.last_sync.removed),
        (5, 2),
        "{after:?}"
    );
    assert_eq!(after.tools, built.tools, "{after:?}");
    assert_eq!(found(&env, "aardvark"), ["w/s0000@v1"]);
    assert_eq!(found(&env, "bobolink"), ["x/t0299@v1"]);
    assert_eq!(found(&env, "wombat"), ["w/s0301@v1"]);
    assert_eq!(found(&env, "pangolin"), ["w/s0450@v3"]);
    assert_eq!(found(&env, "quokka"), ["x/t9999@v1"]);
    assert_eq!(env.refs(&["--bundle", "w"]).len(), 900 - 2 + 1);
    assert_eq!(found(&env, "flock").len(), 299);
    assert_eq!(files_read(&env), 0);

    // A whole bundle removed.
    std::fs::remove_dir_all(env.bundle_dir(&x)).unwrap();
    let after = status(&env);
    assert_eq!(
        (after.last_sync.read, after.last_sync.removed),
        (0, 301),
        "{after:?}"
    );
    assert_eq!(found(&env, "herd").len(), 900 - 2 - 2);
}

#[test]
fn a_same_size_edit_is_seen() {
    // The stamp is mtime with nanoseconds, size and inode: an in-place edit that keeps the
    // size and the inode must still be seen through its mtime.
    let env = TestEnv::new();
    let w = env.bundle("w");
    put_described(&env, "w", "feeder", "v1", "Feeds the aardvark at noon");
    let file = env.tool_file(&w, "feeder", "v1");
    assert_eq!(found(&env, "aardvark"), ["w/feeder@v1"]);
    assert_eq!(files_read(&env), 0);

    let before = std::fs::metadata(&file).unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    let edited = text.replace("aardvark", "bobolink");
    assert_eq!(edited.len(), text.len());
    std::fs::write(&file, &edited).unwrap();
    let after = std::fs::metadata(&file).unwrap();
    assert_eq!(after.len(), before.len());
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        assert_eq!(
            after.ino(),
            before.ino(),
            "an in-place write keeps the inode"
        );
    }

    assert_eq!(files_read(&env), 1);
    assert_eq!(found(&env, "bobolink"), ["w/feeder@v1"]);
    assert!(found(&env, "aardvark").is_empty());
}

/// A time the checks below run before: a file dated there was not settled when it was stamped.
fn in_an_hour() -> SystemTime {
    SystemTime::now() + std::time::Duration::from_secs(3600)
}

#[test]
fn a_same_size_edit_of_a_file_dated_after_the_check_is_seen() {
    // A stamp (mtime, size, inode) only vouches for a file whose mtime is older than the check
    // that took it. Otherwise a later in-place edit of the same size can keep the same mtime:
    // on a file system with coarse timestamps (1 s on HFS+, ext3 and many network file
    // systems, 2 s on FAT, a kernel tick on Linux before 6.13) when the edit lands in the
    // tick of the check, and on any file system when the file's clock runs ahead (an NFS
    // server, `tar x`, `touch -d`). Git calls such entries "racily clean" and reads them
    // again. Played here with an mtime an hour ahead, kept across the edit, so the test says
    // the same on every file system.
    let env = TestEnv::new();
    let w = env.bundle("w");
    put_described(&env, "w", "feeder", "v1", "Feeds the aardvark at noon");
    let file = env.tool_file(&w, "feeder", "v1");
    let ahead = in_an_hour();
    set_mtime(&file, ahead);
    // This check stamps the file while its mtime is not yet in the past.
    assert_eq!(found(&env, "aardvark"), ["w/feeder@v1"]);

    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replace("aardvark", "bobolink")).unwrap();
    set_mtime(&file, ahead);

    assert_eq!(
        found(&env, "bobolink"),
        ["w/feeder@v1"],
        "the edit was never seen: the index kept the old text"
    );
    assert!(found(&env, "aardvark").is_empty());
}

#[test]
fn a_version_added_to_a_folder_dated_after_the_check_is_seen() {
    // The same for folders: a version folder added to a slug folder whose mtime was not in
    // the past when the check listed it (a folder's size on ext4 stays 4096).
    let env = TestEnv::new();
    let w = env.bundle("w");
    put_described(&env, "w", "feeder", "v1", "Feeds the aardvark at noon");
    let slug_dir = env.bundle_dir(&w).join("tools/feeder");
    let ahead = in_an_hour();
    set_mtime(&slug_dir, ahead);
    assert_eq!(found(&env, "aardvark"), ["w/feeder@v1"]);

    hand_tool(
        &env,
        &w,
        "feeder",
        "v2",
        "Feeds the aardvark and the pangolin",
    );
    set_mtime(&slug_dir, ahead);

    assert_eq!(
        found(&env, "pangolin"),
        ["w/feeder@v2"],
        "the new version was never seen"
    );
}

// ---------------------------------------------------------------------------------------------
// 3. Writes through toolctl refresh the index themselves.

#[test]
fn writes_through_toolctl_refresh_the_index_themselves() {
    let env = TestEnv::new();
    // The index exists once something read (writes never build a whole index).
    assert_eq!(found(&env, "readfile"), ["builtin/readfile@v1"]);
    assert!(index_file(&env).is_file());

    // bundle put (create).
    let w = env.bundle("w");
    assert_eq!(files_read(&env), 0);

    // tool put: searchable at once, and the next command reads nothing.
    put_described(&env, "w", "feeder", "v1", "Feeds the aardvark at noon");
    assert_eq!(files_read(&env), 0);
    assert_eq!(found(&env, "aardvark"), ["w/feeder@v1"]);
    put_described(
        &env,
        "w",
        "feeder",
        "v2",
        "Feeds the aardvark and the pangolin",
    );
    put_described(&env, "w", "groomer", "v1", "Brushes the pangolin scales");
    assert_eq!(files_read(&env), 0);
    assert_eq!(found(&env, "pangolin").len(), 2);

    // tool disable / enable.
    env.run(&["tool", "disable", "w/groomer@v1"]).success();
    assert_eq!(files_read(&env), 0);
    assert_eq!(found(&env, "pangolin"), ["w/feeder@v2"]);
    let disabled = search(&env, &["brushes", "--include-disabled"]);
    assert_eq!(disabled.refs(), ["w/groomer@v1"]);
    assert!(!disabled.items[0].is_enabled);
    env.run(&["tool", "enable", "w/groomer@v1"]).success();
    assert_eq!(files_read(&env), 0);
    assert_eq!(found(&env, "pangolin").len(), 2);

    // tool delete.
    env.run(&["tool", "delete", "w/feeder@v2"]).success();
    let after = status(&env);
    assert_eq!(after.last_sync.read, 0, "{after:?}");
    assert_eq!(
        after.last_sync.removed, 0,
        "the delete already dropped it: {after:?}"
    );
    assert_eq!(found(&env, "pangolin"), ["w/groomer@v1"]);
    assert_eq!(found(&env, "aardvark"), ["w/feeder@v1"]);

    // bundle disable / enable.
    env.run(&["bundle", "disable", "w"]).success();
    assert_eq!(files_read(&env), 0);
    assert!(found(&env, "aardvark").is_empty());
    env.run(&["bundle", "enable", "w"]).success();
    assert_eq!(files_read(&env), 0);
    assert_eq!(found(&env, "aardvark"), ["w/feeder@v1"]);

    // bundle put --id: renamed; references and bundle words follow.
    env.run(&["bundle", "put", "--id", &w, "--slug", "kangaroo"])
        .success();
    assert_eq!(files_read(&env), 0);
    assert_eq!(found(&env, "aardvark"), ["kangaroo/feeder@v1"]);
    assert_eq!(found(&env, "kangaroo").len(), 2);

    // bundle delete (soft) / restore.
    env.run(&["bundle", "delete", "kangaroo"]).success();
    assert_eq!(files_read(&env), 0);
    assert!(found(&env, "aardvark").is_empty());
    assert_eq!(
        search(&env, &["aardvark", "--include-deleted"]).refs(),
        ["kangaroo/feeder@v1"]
    );
    env.run(&["bundle", "restore", "kangaroo"]).success();
    assert_eq!(files_read(&env), 0);
    assert_eq!(found(&env, "aardvark"), ["kangaroo/feeder@v1"]);

    // Built-in flags (in toolctl.json).
    env.run(&["tool", "disable", "builtin/readfile"]).success();
    assert_eq!(files_read(&env), 0);
    assert!(found(&env, "readfile").is_empty());
    env.run(&["tool", "enable", "builtin/readfile"]).success();
    assert_eq!(found(&env, "readfile"), ["builtin/readfile@v1"]);

    // A second bundle created and filled: the same.
    env.bundle("other");
    put_described(&env, "other", "painter", "v1", "Paints the aardvark blue");
    assert_eq!(files_read(&env), 0);
    assert_eq!(found(&env, "aardvark").len(), 2);
}

// ---------------------------------------------------------------------------------------------
// 4. Index damage is repaired, never fatal.

/// A catalog big enough for its index to span many pages: bundle `w` with 60 tools written by
/// hand, bundle `x` with two put through toolctl (one of them disabled). Returns the env and
/// what a healthy index answers.
fn damage_fixture() -> (TestEnv, Answers) {
    let env = TestEnv::new();
    let w = env.bundle("w");
    for i in 0..60 {
        let animal = ["aardvark", "pangolin", "quokka", "wombat"][i % 4];
        hand_tool(
            &env,
            &w,
            &format!("tool{i}"),
            "v1",
            &format!("Tool number {i} counts the {animal} herd marker{i} in the weather"),
        );
    }
    env.bundle("x");
    put_described(&env, "x", "painter", "v1", "Paints the aardvark herd blue");
    put_described(&env, "x", "sleeper", "v1", "Puts the quokka to sleep");
    env.run(&["tool", "disable", "x/sleeper"]).success();
    let answers = Answers::of(&env);
    assert_eq!(answers.searches[0].1.len(), 16, "{:?}", answers.searches[0]);
    (env, answers)
}

/// The answers to compare a repaired index with.
#[derive(Debug, PartialEq)]
struct Answers {
    searches: Vec<(Vec<&'static str>, Vec<String>)>,
    list: Vec<String>,
    tools: u64,
    bundles: u64,
}

impl Answers {
    const QUERIES: [&[&str]; 6] = [
        &["aardvark"],
        &["marker17"],
        &["wether"],
        &["herd", "weather"],
        &["tool", "number", "5"],
        &["quokka", "--include-disabled"],
    ];

    #[track_caller]
    fn of(env: &TestEnv) -> Self {
        let status = status(env);
        assert_eq!(status.problems, 0, "{status:?}");
        Self {
            searches: Self::QUERIES
                .iter()
                .map(|q| (q.to_vec(), search(env, q).refs()))
                .collect(),
            list: env.refs(&["--include-disabled", "--include-deleted"]),
            tools: status.tools,
            bundles: status.bundles,
        }
    }
}

/// After damage: searches answer as before and exit 0, `index status` is healthy, and the
/// check after that has nothing left to do.
#[track_caller]
fn assert_repaired(env: &TestEnv, expected: &Answers) {
    let first = search(env, &["aardvark"]);
    assert_eq!(first.refs(), expected.searches[0].1, "{}", first.run);
    assert!(first.problems.is_empty(), "{}", first.run);
    let again = Answers::of(env);
    assert_eq!(&again, expected);
    let healthy = status(env);
    assert_eq!(healthy.format_version, toolctl_lib::index::FORMAT_VERSION);
    assert_eq!(healthy.path.as_deref(), Some(index_file(env).as_path()));
    assert!(healthy.size_bytes > 0, "{healthy:?}");
    assert_eq!(healthy.problems, 0, "{healthy:?}");
    assert_eq!(healthy.last_sync.read, 0, "{healthy:?}");
    assert!(!healthy.last_sync.rebuilt, "{healthy:?}");
}

/// The index's WAL side files (`-wal`, `-shm`; a clean shutdown leaves none).
fn side_files(env: &TestEnv) -> [PathBuf; 2] {
    let file = index_file(env);
    ["-wal", "-shm"].map(|suffix| {
        let mut name = file.clone().into_os_string();
        name.push(suffix);
        PathBuf::from(name)
    })
}

#[test]
fn an_index_of_garbage_bytes_is_rebuilt() {
    let (env, expected) = damage_fixture();
    let file = index_file(&env);
    let len = std::fs::metadata(&file).unwrap().len() as usize;
    let garbage: Vec<u8> = (0..len).map(|i| (i * 7 + 13) as u8).collect();
    std::fs::write(&file, garbage).unwrap();

    // The very next command repairs it, and says so.
    let repaired = status(&env);
    assert!(repaired.last_sync.rebuilt, "{repaired:?}");
    assert_eq!(repaired.last_sync.read, 62, "{repaired:?}");
    assert_eq!(repaired.tools, expected.tools);
    assert_repaired(&env, &expected);
}

#[test]
fn a_short_garbage_index_is_rebuilt() {
    let (env, expected) = damage_fixture();
    std::fs::write(index_file(&env), "not a database\n").unwrap();
    assert_repaired(&env, &expected);
}

#[test]
fn an_empty_index_file_is_rebuilt() {
    let (env, expected) = damage_fixture();
    std::fs::write(index_file(&env), "").unwrap();
    assert_repaired(&env, &expected);
}

#[test]
fn an_index_truncated_to_half_is_rebuilt() {
    let (env, expected) = damage_fixture();
    let file = index_file(&env);
    let len = std::fs::metadata(&file).unwrap().len();
    assert!(len >= 8 * 4096, "the index should span many pages: {len}");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&file)
        .unwrap()
        .set_len(len / 2)
        .unwrap();
    assert_repaired(&env, &expected);
}

#[test]
fn a_deleted_index_is_rebuilt() {
    let (env, expected) = damage_fixture();
    std::fs::remove_file(index_file(&env)).unwrap();
    for side in side_files(&env) {
        let _ = std::fs::remove_file(side);
    }
    let rebuilt = status(&env);
    assert_eq!(
        rebuilt.last_sync.read, 62,
        "every file read again: {rebuilt:?}"
    );
    assert_eq!(rebuilt.tools, expected.tools);
    assert_repaired(&env, &expected);
}

#[test]
fn a_deleted_state_folder_is_rebuilt() {
    let (env, expected) = damage_fixture();
    std::fs::remove_dir_all(env.catalog().join(".toolctl")).unwrap();
    assert_repaired(&env, &expected);
    assert!(index_file(&env).is_file());
    // Writes work again too, and keep the new index in step.
    put_described(&env, "x", "painter", "v2", "Paints the aardvark herd red");
    assert_eq!(files_read(&env), 0);
    assert!(found(&env, "aardvark").contains(&"x/painter@v2".to_owned()));
}

/// Set the index's `PRAGMA user_version` (where the format version is kept).
fn set_user_version(env: &TestEnv, version: i32) {
    let conn = rusqlite::Connection::open(index_file(env)).unwrap();
    conn.pragma_update(None, "user_version", version).unwrap();
    let read: i32 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(read, version);
}

#[test]
fn an_index_of_an_older_format_is_rebuilt() {
    let (env, expected) = damage_fixture();
    let current = status(&env).format_version;
    assert!(current >= 1);
    set_user_version(&env, current - 1);
    let repaired = status(&env);
    assert!(repaired.last_sync.rebuilt, "{repaired:?}");
    assert_eq!(repaired.format_version, current);
    assert_repaired(&env, &expected);
}

#[test]
fn an_index_of_a_newer_format_is_rebuilt() {
    let (env, expected) = damage_fixture();
    let current = status(&env).format_version;
    set_user_version(&env, current + 1);
    assert_repaired(&env, &expected);
    let conn = rusqlite::Connection::open(index_file(&env)).unwrap();
    let version: i32 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, current, "rebuilt in this toolctl's format");
}

#[test]
fn a_foreign_database_in_place_of_the_index_is_rebuilt() {
    let (env, expected) = damage_fixture();
    std::fs::remove_file(index_file(&env)).unwrap();
    let conn = rusqlite::Connection::open(index_file(&env)).unwrap();
    conn.execute_batch("CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('hello');")
        .unwrap();
    drop(conn);
    assert_repaired(&env, &expected);
}

#[test]
fn an_index_with_an_older_layout_under_the_same_version_is_rebuilt() {
    // A table the code needs is missing (an index written before it existed).
    let (env, expected) = damage_fixture();
    let conn = rusqlite::Connection::open(index_file(&env)).unwrap();
    conn.execute_batch("DROP TABLE slug_dir;").unwrap();
    drop(conn);
    assert_repaired(&env, &expected);
}

#[test]
fn garbage_side_files_beside_the_index_do_no_harm() {
    let (env, expected) = damage_fixture();
    let [wal, shm] = side_files(&env);
    std::fs::write(&wal, vec![0xA5u8; 5000]).unwrap();
    std::fs::write(&shm, vec![0x5Au8; 32768]).unwrap();
    assert_repaired(&env, &expected);
}

#[test]
fn a_corrupt_page_in_the_full_text_tables_is_repaired() {
    // Damage where the change check does not look (it reads the tool and bundle tables; the
    // full-text tables are only read by the search itself) must be repaired all the same.
    let (env, expected) = damage_fixture();
    let file = index_file(&env);
    let (page_size, root): (u64, u64) = {
        let conn = rusqlite::Connection::open(&file).unwrap();
        let size: i64 = conn
            .query_row("PRAGMA page_size", [], |r| r.get(0))
            .unwrap();
        let root: i64 = conn
            .query_row(
                "SELECT rootpage FROM sqlite_master WHERE name = 'tool_fts_data'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        (size as u64, root as u64)
    };
    for side in side_files(&env) {
        assert!(!side.exists(), "the index was closed cleanly");
    }
    {
        use std::io::{Seek, SeekFrom, Write};
        let mut f = std::fs::OpenOptions::new().write(true).open(&file).unwrap();
        f.seek(SeekFrom::Start((root - 1) * page_size)).unwrap();
        f.write_all(&vec![0xA5u8; page_size as usize]).unwrap();
    }
    assert_repaired(&env, &expected);
}

// ---------------------------------------------------------------------------------------------
// 5. index rebuild; index status counts.

#[test]
fn index_rebuild_gives_the_same_results() {
    let (env, expected) = damage_fixture();
    let run = env.run(&["--json", "index", "rebuild"]);
    run.success();
    let rebuilt: IndexStatus = run.parse();
    assert!(rebuilt.last_sync.rebuilt, "{rebuilt:?}");
    assert_eq!(
        rebuilt.last_sync.read, 62,
        "every tool file read: {rebuilt:?}"
    );
    assert_eq!(rebuilt.tools, expected.tools);
    assert_eq!(rebuilt.bundles, expected.bundles);
    assert_eq!(rebuilt.problems, 0);
    assert_eq!(Answers::of(&env), expected);
    assert_eq!(files_read(&env), 0);

    // Human output.
    let run = env.run(&["index", "rebuild"]);
    run.success();
    assert!(run.stdout.contains("rebuilt"), "{run}");
    assert!(run.stdout.contains("62 files read"), "{run}");
    assert_eq!(Answers::of(&env), expected);
}

/// Regression: `index rebuild` said `size 4096 bytes` (the database file's length while the
/// rebuilt pages were still in its write-ahead log), and `index status` right after the real
/// size. Both report the size the file has once checkpointed.
#[test]
fn index_rebuild_reports_the_size_index_status_reports() {
    let (env, _) = damage_fixture();
    let rebuilt: IndexStatus = env.run(&["--json", "index", "rebuild"]).success().parse();
    let status = status(&env);
    assert_eq!(
        rebuilt.size_bytes, status.size_bytes,
        "{rebuilt:?}\n{status:?}"
    );
    assert!(rebuilt.size_bytes > 4096 * 4, "{rebuilt:?}");
    // No toolctl runs now: the file is checkpointed and is that long.
    let on_disk = std::fs::metadata(index_file(&env)).unwrap().len();
    assert_eq!(status.size_bytes, on_disk);
    // The human output says the same of the file it made (a rebuild reads the files in
    // parallel, so its pages, and its size, may differ from the last one's).
    let run = env.run(&["index", "rebuild"]);
    run.success();
    let on_disk = std::fs::metadata(index_file(&env)).unwrap().len();
    assert!(run.stdout.contains(&format!("{on_disk} bytes")), "{run}");
}

#[test]
fn index_status_counts_match_the_lists() {
    let env = TestEnv::new();
    env.bundle("w");
    env.bundle("off");
    env.bundle("gone");
    put_described(&env, "w", "a", "v1", "first");
    put_described(&env, "w", "a", "v2", "second");
    put_described(&env, "w", "b", "v1", "disabled one");
    env.run(&["tool", "disable", "w/b"]).success();
    put_described(&env, "off", "c", "v1", "in a disabled bundle");
    env.run(&["bundle", "disable", "off"]).success();
    put_described(&env, "gone", "d", "v1", "in a deleted bundle");
    env.run(&["bundle", "delete", "gone"]).success();
    let http = json!({
        "slug": "remote", "version": "v1", "type": "http",
        "impl": { "method": "GET", "urlTemplate": "https://not.allowed.example/x" },
        "argSchema": { "type": "object" }
    });
    env.edit_config(|c| c["allowedHosts"] = json!(["not.allowed.example"]));
    env.put_tool("w", &http);
    env.edit_config(|c| c["allowedHosts"] = json!([]));

    let tools = env.refs(&["--include-disabled", "--include-deleted"]);
    let bundles = env
        .bundle_list(&["--include-disabled", "--include-deleted"])
        .items;
    let status = status(&env);
    assert_eq!(
        status.tools as usize,
        tools.len(),
        "{status:?} vs {tools:?}"
    );
    assert_eq!(status.tools, 4 + 6);
    assert_eq!(status.bundles as usize, bundles.len(), "{status:?}");
    assert_eq!(status.bundles, 4);
    assert_eq!(status.problems, 0);

    // Human output says the same.
    let run = env.run(&["index", "status"]);
    run.success();
    let index_path = index_file(&env);
    let index_path = index_path.display().to_string();
    let format = toolctl_lib::index::FORMAT_VERSION.to_string();
    for (field, value) in [
        ("path", index_path.as_str()),
        ("format", format.as_str()),
        ("tools", "10"),
        ("bundles", "4"),
        ("problems", "0"),
    ] {
        assert!(
            run.stdout
                .lines()
                .any(|l| l.split_whitespace().collect::<Vec<_>>() == [field, value]),
            "no row {field} = {value}\n{run}"
        );
    }
    assert!(run.stdout.contains("0 files read, 0 removed"), "{run}");
}

#[test]
fn index_status_counts_match_the_lists_with_broken_and_missing_files() {
    // Files that cannot be used are problems, not tools or bundles: the counts must still be
    // those of the lists.
    let env = TestEnv::new();
    let w = env.bundle("w");
    let broken = env.bundle("broken");
    put_described(&env, "w", "a", "v1", "first");
    put_described(&env, "w", "b", "v1", "second");
    put_described(&env, "w", "c", "v1", "third");
    put_described(&env, "w", "d", "v1", "fourth");
    put_described(&env, "broken", "e", "v1", "fifth");
    put_described(&env, "broken", "f", "v1", "sixth");
    search(&env, &["first"]);

    // A bundle.json that does not parse (its two tools cannot be used either).
    std::fs::write(env.bundle_dir(&broken).join("bundle.json"), "{ broken").unwrap();
    // A tool.json that does not parse.
    std::fs::write(env.tool_file(&w, "a", "v1"), "{ \"slug\": ").unwrap();
    // A version folder whose tool.json went away.
    std::fs::remove_file(env.tool_file(&w, "b", "v1")).unwrap();
    // A stray folder under bundles/ with no bundle.json.
    std::fs::create_dir_all(env.catalog().join("bundles/stray")).unwrap();

    let list = env.tool_list(&[
        "--include-disabled",
        "--include-deleted",
        "--page-size",
        "1000",
    ]);
    let bundles = env.bundle_list(&["--include-disabled", "--include-deleted"]);
    assert_eq!(list.items.len(), 4 + 2, "{:?}", list.items);
    assert_eq!(bundles.items.len(), 2, "{:?}", bundles.items);
    let status = status(&env);
    assert_eq!(status.problems, 2, "{status:?}");
    assert_eq!(
        (status.tools as usize, status.bundles as usize),
        (list.items.len(), bundles.items.len()),
        "index status counts tools or bundles the lists do not have: {status:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// 6. A malformed tool.json.

#[test]
fn a_malformed_tool_file_is_reported_and_left_out_of_search() {
    let env = TestEnv::new();
    let w = env.bundle("w");
    put_described(&env, "w", "feeder", "v1", "Feeds the aardvark at noon");
    put_described(&env, "w", "painter", "v1", "Paints the aardvark blue");
    assert_eq!(found(&env, "aardvark").len(), 2);

    let file = env.tool_file(&w, "feeder", "v1");
    let good = std::fs::read_to_string(&file).unwrap();
    std::fs::write(
        &file,
        "{\n  \"slug\": \"feeder\",\n  \"description\": \"aardvark\"\n",
    )
    .unwrap();

    let searched = search(&env, &["aardvark"]);
    assert_eq!(searched.refs(), ["w/painter@v1"]);
    searched
        .run
        .stderr_has("warning:")
        .stderr_has(file.to_str().unwrap())
        .stderr_has("line 4 column 1");
    assert_eq!(searched.problems.len(), 1, "{}", searched.run);
    assert_eq!(searched.problems[0].path, file);
    // Human output too: exit 0, the path on stderr.
    let run = env.run(&["search", "aardvark"]);
    run.success().stderr_has(file.to_str().unwrap());
    assert!(run.stdout.contains("w/painter@v1"), "{run}");
    assert!(!run.stdout.contains("feeder"), "{run}");
    let broken = status(&env);
    assert_eq!(broken.problems, 1, "{broken:?}");
    // Nothing rewrote it.
    assert!(
        std::fs::read_to_string(&file)
            .unwrap()
            .ends_with("aardvark\"\n")
    );

    // Fixed: back in the results, no warning.
    std::fs::write(&file, &good).unwrap();
    let searched = search(&env, &["aardvark"]);
    assert_eq!(searched.items.len(), 2, "{}", searched.run);
    assert!(searched.has("w/feeder@v1"));
    assert!(searched.problems.is_empty());
    assert_eq!(searched.run.stderr, "");
    assert_eq!(status(&env).problems, 0);
}

// ---------------------------------------------------------------------------------------------
// 7. Searches while another process writes.

#[test]
fn searches_during_writes_see_whole_tools() {
    let env = TestEnv::new();
    let w = env.bundle("w");
    put_described(&env, "w", "busy", "v1", "busy tool version v1");
    search(&env, &["busy"]);
    const WRITES: usize = 16;

    std::thread::scope(|scope| {
        let writer = scope.spawn(|| {
            for i in 2..=WRITES {
                // A new version through toolctl.
                put_described(
                    &env,
                    "w",
                    "busy",
                    &format!("v{i}"),
                    &format!("busy tool version v{i}"),
                );
                // A description change of v1 by hand, the way an editor saves (rename).
                let file = env.tool_file(&w, "busy", "v1");
                let mut doc = read_json(&file);
                doc["description"] = format!("busy tool version v1 edit {i}").into();
                replace_by_rename(&file, &serde_json::to_string_pretty(&doc).unwrap());
                // And a new slug now and then.
                if i % 4 == 0 {
                    put_described(
                        &env,
                        "w",
                        &format!("busy{i}"),
                        "v1",
                        &format!("busy tool version v1 of busy{i}"),
                    );
                }
            }
        });
        // At least 30 searches, and more until the writer is done, so they span its writes.
        let mut answers = std::collections::BTreeSet::new();
        let mut n = 0;
        while n < 30 || !writer.is_finished() {
            let run = env.run(&["--json", "search", "busy", "tool", "--page-size", "1000"]);
            assert_eq!(run.status, Some(0), "search {n} failed\n{run}");
            let page: SearchPage = run.parse();
            assert!(page.problems.is_empty(), "search {n}\n{run}");
            assert!(!page.items.is_empty(), "search {n} lost the tools\n{run}");
            let mut refs = Vec::new();
            for item in page.items {
                let (tool, _) = tool_view(item, &["rank", "score", "tier", "why"]);
                assert!(tool.reference.starts_with("w/busy"), "search {n}: {tool:?}");
                assert_eq!(tool.bundle, "w");
                assert_eq!(tool.bundle_id, w);
                assert!(!tool.tool_id.is_empty());
                assert!(tool.available && tool.is_enabled, "{tool:?}");
                assert!(
                    tool.description
                        .starts_with(&format!("busy tool version {}", tool.version)),
                    "search {n}: a tool with another version's text: {tool:?}"
                );
                assert!(tool.path.as_ref().is_some_and(|p| p.is_file()));
                refs.push(tool.reference);
            }
            refs.sort();
            answers.insert(refs);
            if n % 10 == 9 {
                let run = env.run(&["--json", "index", "status"]);
                assert_eq!(run.status, Some(0), "{run}");
            }
            n += 1;
        }
        writer.join().unwrap();
        assert!(
            answers.len() > 1,
            "the searches never saw the writer's work: {answers:?}"
        );
    });

    // Once the writer is done, everything it wrote is found, once.
    let searched = search(&env, &["busy"]);
    let mut refs = searched.refs();
    refs.sort();
    let mut expected: Vec<String> = (1..=WRITES).map(|i| format!("w/busy@v{i}")).collect();
    expected.extend((4..=WRITES).step_by(4).map(|i| format!("w/busy{i}@v1")));
    expected.sort();
    assert_eq!(refs, expected);
    assert_eq!(
        found(&env, &format!("edit {WRITES}"))
            .first()
            .map(String::as_str),
        Some("w/busy@v1")
    );
    assert_eq!(files_read(&env), 0);
}

// ---------------------------------------------------------------------------------------------
// 8. A catalog that does not exist.

#[test]
fn a_search_on_a_missing_catalog_creates_nothing() {
    let env = TestEnv::uninit_default();
    let catalog = env.catalog();
    assert!(!catalog.exists());

    // Reads of a catalog that does not exist see an empty one (the built-ins): exit 0.
    assert_eq!(found(&env, "readfile"), ["builtin/readfile@v1"]);
    assert!(found(&env, "aardvark").is_empty());
    let status = status(&env);
    assert_eq!(status.path, None, "{status:?}");
    assert_eq!(status.tools, 4);
    assert_eq!(status.bundles, 1);
    let rebuilt: IndexStatus = env.run(&["--json", "index", "rebuild"]).success().parse();
    assert_eq!(rebuilt.path, None);
    env.run(&["search", "read", "a", "file"]).success();
    env.run(&["index", "status"]).success();
    assert!(!catalog.exists(), "a read created the catalog");

    // A catalog named by $TOOLCTL_CATALOG that does not exist is an error (never an empty
    // catalog), and creates nothing either.
    let elsewhere = env.root().join("elsewhere");
    let mut cmd = env.bare_command();
    cmd.env("TOOLCTL_CATALOG", &elsewhere)
        .args(["--json", "search", "readfile"]);
    let run = Run::of(cmd, None);
    run.failure(4);
    assert_eq!(run.json()["error"]["code"], "CATALOG_NOT_FOUND");
    assert!(!elsewhere.exists());
    let mut cmd = env.bare_command();
    cmd.args(["--json", "search", "readfile"]);
    Run::of(cmd, None).success();
    let mut cmd = env.bare_command();
    cmd.args(["--json", "index", "status"]);
    Run::of(cmd, None).success();
    assert!(!env.xdg_data().exists());
    assert!(!env.home().join(".local").exists());

    // An unknown bundle is not found (exit 4), still creating nothing.
    env.run(&["search", "read", "--bundle", "nope"]).failure(4);
    assert!(!catalog.exists());
}
