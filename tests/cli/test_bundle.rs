//! `toolctl bundle put|get|list|enable|disable|delete|restore`: bundle slugs are unique,
//! deletes are soft, and a disabled or deleted bundle takes no new or changed tools.

use crate::common::{TestEnv, assert_uuid_v7, bundle_view, read_json, timestamp, tool_doc};
use serde_json::json;

#[test]
fn put_creates_a_bundle_file_and_prints_it() {
    let env = TestEnv::new();
    let run = env.run(&[
        "bundle",
        "put",
        "--slug",
        "weather",
        "--display-name",
        "Weather",
        "--description",
        "Forecasts",
    ]);
    run.success();
    assert_eq!(run.stdout, "");
    assert_eq!(
        env.normalize(&run.stderr),
        "Created bundle weather ([UUID])\n"
    );

    let list = env.bundle_list(&[]);
    let slugs: Vec<_> = list.items.iter().map(|b| b.slug.as_str()).collect();
    assert_eq!(slugs, ["builtin", "weather"]);
    let weather = &list.items[1];
    assert_uuid_v7(&weather.bundle_id);
    assert_eq!(weather.display_name, "Weather");
    assert_eq!(weather.description, "Forecasts");
    assert!(weather.is_enabled && !weather.is_built_in);
    assert_eq!(weather.tool_count, Some(0));
    assert_eq!(weather.soft_deleted_at, None);
    assert_eq!(weather.created_at, weather.modified_at);
    let file = env.bundle_dir(&weather.bundle_id).join("bundle.json");
    assert_eq!(weather.path.as_deref(), Some(file.as_path()));

    let doc = read_json(&file);
    assert_eq!(doc["bundleID"], weather.bundle_id.as_str());
    assert_eq!(doc["slug"], "weather");
    assert_eq!(doc["isEnabled"], true);
    assert_eq!(doc["isBuiltIn"], false);
    let age = jiff::Timestamp::now().duration_since(timestamp(doc["createdAt"].as_str().unwrap()));
    assert!(age.as_secs() < 60, "createdAt is now: {doc}");
    assert!(doc.get("softDeletedAt").is_none());

    // get by slug and by ID print the same bundle, with its document.
    let (by_slug, extra) = bundle_view(env.json(&["bundle", "get", "weather"]), &["document"]);
    let (by_id, _) = bundle_view(
        env.json(&["bundle", "get", &weather.bundle_id]),
        &["document"],
    );
    assert_eq!(by_slug, by_id);
    assert_eq!(by_slug.tool_count, Some(0));
    assert_eq!(extra["document"], doc);

    // --json put prints the bundle and whether it was created.
    let (view, extra) = bundle_view(
        env.json(&["bundle", "put", "--slug", "other"]),
        &["created"],
    );
    assert_eq!(extra["created"], true);
    assert_eq!(
        view.display_name, "other",
        "displayName defaults to the slug"
    );
}

#[test]
fn enable_disable_delete_restore() {
    let env = TestEnv::new();
    let id = env.bundle("weather");
    let file = env.bundle_dir(&id).join("bundle.json");
    let modified = read_json(&file)["modifiedAt"].clone();

    let run = env.run(&["bundle", "disable", "weather"]);
    run.success();
    assert_eq!(run.stderr, "Bundle weather disabled\n");
    assert_eq!(read_json(&file)["isEnabled"], false);
    assert_eq!(
        read_json(&file)["modifiedAt"],
        modified,
        "a toggle is not a structural change"
    );
    let slugs = |list: crate::common::BundleList| -> Vec<String> {
        list.items.into_iter().map(|b| b.slug).collect()
    };
    assert_eq!(slugs(env.bundle_list(&[])), ["builtin"]);
    assert_eq!(
        slugs(env.bundle_list(&["--include-disabled"])),
        ["builtin", "weather"]
    );
    let again = env.run(&["bundle", "disable", &id]);
    again.success();
    assert_eq!(
        again.stderr,
        "Bundle weather was already disabled; nothing changed\n"
    );
    let (_, extra) = bundle_view(env.json(&["bundle", "enable", "weather"]), &["changed"]);
    assert_eq!(extra["changed"], true);
    let (_, extra) = bundle_view(env.json(&["bundle", "enable", "weather"]), &["changed"]);
    assert_eq!(extra["changed"], false);

    // Soft delete: the file stays, marked; lists hide it unless asked.
    let run = env.run(&["bundle", "delete", "weather"]);
    run.success();
    assert_eq!(run.stderr, "Bundle weather deleted\n");
    let doc = read_json(&file);
    let deleted_at = timestamp(doc["softDeletedAt"].as_str().unwrap());
    assert_eq!(slugs(env.bundle_list(&[])), ["builtin"]);
    assert_eq!(slugs(env.bundle_list(&["--include-disabled"])), ["builtin"]);
    let listed = env.bundle_list(&["--include-deleted"]);
    assert_eq!(listed.items.len(), 2);
    assert_eq!(
        listed.items[1].soft_deleted_at.as_deref().map(timestamp),
        Some(deleted_at)
    );
    // Still reachable by name.
    let (view, _) = bundle_view(env.json(&["bundle", "get", "weather"]), &["document"]);
    assert!(view.soft_deleted_at.is_some());
    // Deleting again keeps the first timestamp.
    env.run(&["bundle", "delete", "weather"]).success();
    assert_eq!(read_json(&file)["softDeletedAt"], doc["softDeletedAt"]);

    let run = env.run(&["bundle", "restore", "weather"]);
    run.success();
    assert_eq!(run.stderr, "Bundle weather restored\n");
    assert!(read_json(&file).get("softDeletedAt").is_none());
    assert_eq!(slugs(env.bundle_list(&[])), ["builtin", "weather"]);
}

#[test]
fn slugs_are_unique_and_checked() {
    let env = TestEnv::new();
    let id = env.bundle("weather");

    let run = env.run(&["bundle", "put", "--slug", "weather"]);
    run.failure(5)
        .stderr_has("bundle slug 'weather' is already used")
        .stderr_has(&format!("--id {id}"));
    let err = env.json_error(&["bundle", "put", "--slug", "weather"], 5);
    assert_eq!(err.error.code, "CONFLICT");
    assert_eq!(err.error.details["bundleID"], id.as_str());

    let err = env.json_error(&["bundle", "put", "--slug", "builtin"], 5);
    assert_eq!(err.error.code, "CONFLICT");
    assert!(err.error.hint.unwrap().contains("built-in"));

    // A soft-deleted bundle keeps its slug until reaped.
    env.run(&["bundle", "delete", "weather"]).success();
    env.run(&["bundle", "put", "--slug", "weather"])
        .failure(5)
        .stderr_has("restore");

    for (slug, problem) in [
        ("a_b", "underscore"),
        ("a b", "whitespace"),
        ("a/b", "slash"),
        ("", "empty"),
    ] {
        let run = env.run(&["bundle", "put", "--slug", slug]);
        run.failure(3).stderr_has("slug").stderr_has(problem);
        let err = env.json_error(&["bundle", "put", "--slug", slug], 3);
        assert_eq!(err.error.code, "VALIDATION_ERROR");
        assert_eq!(err.error.details["problems"][0]["pointer"], "/slug");
    }
    assert_eq!(env.bundle_list(&["--include-deleted"]).items.len(), 2);
}

#[test]
fn replace_with_id_keeps_created_at() {
    let env = TestEnv::new();
    let id = env.bundle("weather");
    let file = env.bundle_dir(&id).join("bundle.json");
    let created = read_json(&file)["createdAt"].clone();

    let run = env.run(&[
        "bundle",
        "put",
        "--id",
        &id,
        "--slug",
        "weather",
        "--description",
        "New words",
    ]);
    run.success();
    assert_eq!(
        env.normalize(&run.stderr),
        "Replaced bundle weather ([UUID])\n"
    );
    let doc = read_json(&file);
    assert_eq!(doc["createdAt"], created);
    assert_eq!(doc["description"], "New words");
    assert!(timestamp(doc["modifiedAt"].as_str().unwrap()) >= timestamp(created.as_str().unwrap()));

    // A whole file replaces the bundle; unknown fields are kept, createdAt is not the file's.
    let replacement = json!({
        "bundleID": id,
        "slug": "forecasts",
        "displayName": "Forecasts",
        "createdAt": "2001-01-01T00:00:00Z",
        "modifiedAt": "2001-01-01T00:00:00Z",
        "x-owner": { "team": "maps", "a": 1 }
    });
    let input = env.input(&replacement);
    let (view, extra) = bundle_view(env.json(&["bundle", "put", "--file", &input]), &["created"]);
    assert_eq!(extra["created"], false);
    assert_eq!(view.slug, "forecasts");
    assert_eq!(view.bundle_id, id);
    let doc = read_json(&file);
    assert_eq!(doc["createdAt"], created);
    assert_eq!(doc["x-owner"], json!({ "team": "maps", "a": 1 }));
    assert_eq!(
        crate::common::keys(&doc["x-owner"]),
        ["team", "a"],
        "key order of unknown fields is kept"
    );
    // Renamed: the old slug is free, the new one names it.
    env.run(&["bundle", "get", "weather"]).failure(4);
    env.run(&["bundle", "get", "forecasts"]).success();
    assert_eq!(env.bundle_list(&[]).items.len(), 2);
}

#[test]
fn bundle_put_from_stdin() {
    let env = TestEnv::new();
    let run = env.run_stdin(
        &["--json", "bundle", "put", "--file", "-"],
        r#"{"slug": "piped", "description": "from stdin"}"#,
    );
    run.success();
    let (view, _) = bundle_view(run.json(), &["created"]);
    assert_eq!(view.slug, "piped");
    assert_eq!(view.description, "from stdin");
    assert_uuid_v7(&view.bundle_id);
}

#[test]
fn soft_deleted_bundle_hides_its_tools() {
    let env = TestEnv::new();
    env.bundle("gone");
    env.bundle("kept");
    env.put_tool("gone", &tool_doc("t", "v1"));
    env.put_tool("kept", &tool_doc("u", "v1"));
    env.run(&["bundle", "delete", "gone"]).success();

    let refs = env.refs(&[]);
    assert!(refs.contains(&"kept/u@v1".to_owned()));
    assert!(!refs.iter().any(|r| r.starts_with("gone/")), "{refs:?}");
    assert!(
        !env.refs(&["--include-disabled"])
            .iter()
            .any(|r| r.starts_with("gone/"))
    );
    let all = env.tool_list(&["--page-size", "1000", "--include-deleted"]);
    let gone = all
        .items
        .iter()
        .find(|t| t.reference == "gone/t@v1")
        .expect("--include-deleted lists the tools of deleted bundles");
    assert_eq!(gone.status, "bundle deleted");
    assert!(!gone.bundle_enabled);
    // A bare slug does not reach into a deleted bundle; naming the bundle does.
    env.run(&["tool", "get", "t"]).failure(4);
    let got = env.json(&["tool", "get", "gone/t"]);
    assert_eq!(got["status"], "bundle deleted");

    env.run(&["bundle", "restore", "gone"]).success();
    assert!(env.refs(&[]).contains(&"gone/t@v1".to_owned()));
}

#[test]
fn disabled_bundle_hides_its_tools_unless_asked() {
    let env = TestEnv::new();
    env.bundle("off");
    env.put_tool("off", &tool_doc("t", "v1"));
    env.run(&["bundle", "disable", "off"]).success();
    assert!(!env.refs(&[]).contains(&"off/t@v1".to_owned()));
    let all = env.tool_list(&["--include-disabled"]);
    let t = all
        .items
        .iter()
        .find(|t| t.reference == "off/t@v1")
        .unwrap();
    assert_eq!(t.status, "bundle disabled");
    assert!(t.is_enabled, "the tool's own flag is untouched");
}

#[test]
fn no_writes_into_a_disabled_or_deleted_bundle() {
    let env = TestEnv::new();
    let id = env.bundle("b");
    env.put_tool("b", &tool_doc("t", "v1"));
    let file = env.tool_file(&id, "t", "v1");
    let bytes = std::fs::read(&file).unwrap();
    let bundle_file = env.bundle_dir(&id).join("bundle.json");

    for (switch, word) in [("disable", "disabled"), ("delete", "deleted")] {
        env.run(&["bundle", switch, "b"]).success();
        let bundle_bytes = std::fs::read(&bundle_file).unwrap();

        let input = env.input(&tool_doc("new", "v1"));
        env.run(&["tool", "put", "--bundle", "b", &input])
            .failure(6)
            .stderr_has(word);
        let err = env.json_error(&["tool", "put", "--bundle", &id, &input], 6);
        assert_eq!(err.error.code, "FORBIDDEN");
        for toggle in ["disable", "enable"] {
            env.run(&["tool", toggle, "b/t@v1"])
                .failure(6)
                .stderr_has(word);
        }
        assert!(!env.tool_file(&id, "new", "v1").exists());
        assert_eq!(std::fs::read(&file).unwrap(), bytes);
        assert_eq!(std::fs::read(&bundle_file).unwrap(), bundle_bytes);

        let undo = if switch == "disable" {
            "enable"
        } else {
            "restore"
        };
        env.run(&["bundle", undo, "b"]).success();
    }

    // A deleted bundle can be neither toggled nor replaced until restored.
    env.run(&["bundle", "delete", "b"]).success();
    env.run(&["bundle", "disable", "b"]).failure(6);
    env.run(&["bundle", "put", "--id", &id, "--slug", "b"])
        .failure(6)
        .stderr_has("restore");
}
