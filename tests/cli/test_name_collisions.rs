//! What toolctl writes, `validate` accepts: `validate` reports two tool slugs that want the
//! same exported name (`météo` and `meteo`, `weather` and a Cyrillic `wеather`) as an error
//! (rule `name-collision`), so no write may make such a pair — `tool put`, `bundle put --slug`
//! (a rename), `bundle restore` and `bundle import` refuse it with `CONFLICT` (exit 5), the
//! tools named, nothing written.

use crate::common::{TestEnv, find_files, mcp_clients, tool_doc, write_file};
use serde_json::{Value, json};
use std::path::Path;

/// Every file under the catalog's `bundles/` with its bytes, to see that nothing moved.
fn snapshot(env: &TestEnv) -> Vec<(std::path::PathBuf, String)> {
    let mut files: Vec<_> = find_files(&env.catalog().join("bundles"), "tool.json")
        .into_iter()
        .chain(find_files(&env.catalog().join("bundles"), "bundle.json"))
        .map(|p| {
            let bytes = std::fs::read_to_string(&p).unwrap();
            (p, bytes)
        })
        .collect();
    files.sort();
    files
}

/// The refusal of `args` (with `--json`): exit 5, `CONFLICT`, the tools named in the message
/// and `details.tools`, the catalog's files unchanged, and `validate` still clean.
#[track_caller]
fn refused(env: &TestEnv, args: &[&str], exported: &str, tools: &[&str]) {
    let before = snapshot(env);
    let error = env.json_error(args, 5);
    assert_eq!(error.error.code, "CONFLICT", "{error:?}");
    assert!(
        error.error.message.contains(&format!("'{exported}'")),
        "{error:?}"
    );
    let named: Vec<&str> = error.error.details["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(named, tools, "{error:?}");
    assert!(error.error.hint.is_some(), "{error:?}");
    assert_eq!(
        snapshot(env),
        before,
        "{args:?} changed the catalog's files"
    );
    env.run(&["validate"]).success();
}

#[test]
fn tool_put_refuses_a_slug_whose_exported_name_another_tool_wants() {
    let env = TestEnv::new();
    env.bundle("b");
    env.put_tool("b", &tool_doc("weather", "v1"));
    env.put_tool("b", &tool_doc("meteo", "v1"));
    // A confusable (Cyrillic `е`), an accent, and a built-in's name.
    for (slug, exported, tools) in [
        ("wеather", "weather", ["b/weather", "b/wеather"]),
        ("météo", "meteo", ["b/meteo", "b/météo"]),
        ("nów", "now", ["b/nów", "builtin/now"]),
    ] {
        let file = env.input(&tool_doc(slug, "v1"));
        refused(
            &env,
            &["tool", "put", "--bundle", "b", &file],
            exported,
            &tools,
        );
    }
    // What collides with nothing still goes in: a new version, a slug of its own, the same
    // slug in another bundle (its name then carries the bundle's slug).
    env.put_tool("b", &tool_doc("weather", "v2"));
    env.put_tool("b", &tool_doc("météo-radar", "v1"));
    env.bundle("c");
    env.put_tool("c", &tool_doc("weather", "v1"));
    env.run(&["validate"]).success();
}

/// A slug put into a second bundle prefixes the first bundle's tool of that slug
/// (`web__search`), which may be the name another tool already has: refused, though the new
/// tool's own name (`news__search`) is free. (`ʼ`, a modifier letter, is exported as `_`.)
#[test]
fn a_slug_in_a_second_bundle_is_refused_when_the_first_ones_prefixed_name_is_taken() {
    let env = TestEnv::new();
    env.bundle("web");
    env.bundle("other");
    env.bundle("news");
    env.put_tool("web", &tool_doc("search", "v1"));
    env.put_tool("other", &tool_doc("webʼʼsearch", "v1"));
    let file = env.input(&tool_doc("search", "v1"));
    refused(
        &env,
        &["tool", "put", "--bundle", "news", &file],
        "web__search",
        &["other/webʼʼsearch", "web/search"],
    );
    // A slug two bundles share, whose prefixed names are free, goes in.
    env.put_tool("web", &tool_doc("fetch", "v1"));
    env.put_tool("news", &tool_doc("fetch", "v1"));
    env.run(&["validate"]).success();
}

/// A slug folder that is a symlink to a folder (kept elsewhere in the catalog) is a slug like
/// any other: its tool is listed, and a slug whose exported name is its slug is refused.
#[test]
fn a_symlinked_slug_folder_counts_in_the_collision_check() {
    let env = TestEnv::new();
    let id = env.bundle("b");
    env.put_tool("b", &tool_doc("meteo", "v1"));
    let tools = env.bundle_dir(&id).join("tools");
    let real = env.catalog().join("shared/meteo");
    std::fs::create_dir_all(real.parent().unwrap()).unwrap();
    std::fs::rename(tools.join("meteo"), &real).unwrap();
    std::os::unix::fs::symlink("../../../shared/meteo", tools.join("meteo")).unwrap();
    assert_eq!(
        env.refs(&[]).iter().filter(|r| r.starts_with("b/")).count(),
        1
    );
    let file = env.input(&tool_doc("météo", "v1"));
    refused(
        &env,
        &["tool", "put", "--bundle", "b", &file],
        "meteo",
        &["b/meteo", "b/météo"],
    );
}

#[test]
fn a_collision_already_in_the_catalog_stops_only_writes_that_add_one() {
    let env = TestEnv::new();
    let id = env.bundle("b");
    env.put_tool("b", &tool_doc("meteo", "v1"));
    // `git pull` brought a colliding tool: validate says so, other puts still work.
    let mut doc = tool_doc("météo", "v1");
    doc["toolID"] = "01910d3d-3200-7094-b1f3-5a6385e27ed7".into();
    doc["bundleID"] = id.as_str().into();
    doc["schemaVersion"] = "1".into();
    doc["isEnabled"] = true.into();
    doc["createdAt"] = "2024-08-01T09:20:00Z".into();
    doc["modifiedAt"] = "2024-08-01T09:20:00Z".into();
    write_file(
        &env.tool_file(&id, "météo", "v1"),
        &serde_json::to_string_pretty(&doc).unwrap(),
    );
    env.run(&["validate"])
        .failure(3)
        .stdout_has("name-collision");
    env.put_tool("b", &tool_doc("météo", "v2"));
    env.put_tool("b", &tool_doc("radar", "v1"));
}

#[test]
fn restore_rename_and_import_refuse_what_would_collide() {
    let env = TestEnv::new();
    env.bundle("meteo");
    env.put_tool("meteo", &tool_doc("x", "v1"));
    let other = env.bundle("other");
    env.put_tool("other", &tool_doc("x", "v1"));
    let archive = env.root().join("other.zip");
    env.run(&["bundle", "export", "other", "-o", archive.to_str().unwrap()])
        .success();

    // A rename: `météo/x` and `meteo/x` both want `meteo__x`.
    refused(
        &env,
        &["bundle", "put", "--id", &other, "--slug", "météo"],
        "meteo__x",
        &["meteo/x", "météo/x"],
    );
    env.run(&["bundle", "put", "--id", &other, "--slug", "weather"])
        .success();

    // A copy imported under a slug that collides, then under one that does not.
    let file = archive.to_str().unwrap();
    refused(
        &env,
        &["bundle", "import", file, "--as-new", "--slug", "météo"],
        "meteo__x",
        &["meteo/x", "météo/x"],
    );
    env.run(&["bundle", "import", file, "--as-new", "--slug", "radar"])
        .success();

    // A restore: while `météo` was deleted, `meteo/x` did not collide with it.
    env.run(&["bundle", "put", "--id", &other, "--slug", "météo"])
        .failure(5);
    env.run(&["bundle", "delete", "meteo"]).success();
    env.run(&["bundle", "put", "--id", &other, "--slug", "météo"])
        .success();
    refused(
        &env,
        &["bundle", "restore", "meteo"],
        "meteo__x",
        &["meteo/x", "météo/x"],
    );
}

/// `mcp import`: a server tool whose slug would collide (`echo` beside another bundle's
/// `écho`) is refused alone, named with the tool it collides with, the rule and how to import
/// it; the server's other tools are imported, and the catalog stays valid.
#[test]
fn mcp_import_refuses_a_colliding_tool_alone() {
    let env = TestEnv::new();
    let server = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp/server.py");
    env.edit_config(|config| {
        config["mcpServers"] =
            json!({ "fx": { "command": [mcp_clients::python(), server, "stdio"] } });
    });
    env.bundle("other");
    env.put_tool("other", &tool_doc("écho", "v1"));
    let said = "fx/echo and other/écho would all want the exported name 'echo' (validate's rule name-collision); to import it, rename it on the server, or put other/écho anew under another slug and delete it, then import again";

    let human = env.run(&["mcp", "import", "fx"]);
    human
        .success()
        .stderr_has(&format!(
            "warning: MCP server 'fx': refused tool 'echo' (/slug): {said}"
        ))
        .stdout_has("1 refused");
    let mut refs = env.refs(&["--bundle", "fx"]);
    refs.sort();
    assert_eq!(refs, ["fx/add@1", "fx/env@1", "fx/fail@1", "fx/slow@1"]);

    // Again, with --json: nothing new, `echo` refused again with the same words.
    let again = env.json(&["mcp", "import", "fx"]);
    assert_eq!(
        again["refused"],
        json!([{ "name": "echo", "problems": [{ "pointer": "/slug", "message": said }] }])
    );
    assert_eq!(again["added"], json!([]));
    env.run(&["validate"]).success();

    // The way out the message gives: the catalog's tool under another slug.
    env.put_tool("other", &tool_doc("reply", "v1"));
    env.run(&["tool", "delete", "other/écho@v1"]).success();
    let last = env.json(&["mcp", "import", "fx"]);
    assert_eq!(last["refused"], json!([]));
    assert_eq!(last["added"][0]["ref"], "fx/echo@1");
}

/// Regression: a tool slug that two bundles have is exported as `<bundle>__<slug>`; two long
/// non-ASCII bundle slugs that come out the same once in ASCII and cut to 64 characters made
/// `tool put` refuse with "choose a slug whose exported name no other tool wants", though no
/// tool slug would do: the refusal names the bundle slugs, and the hint says to rename one.
#[test]
fn bundle_slugs_that_come_out_the_same_are_named_as_the_cause() {
    let env = TestEnv::new();
    let (a, b) = ("日".repeat(40), format!("{}本", "日".repeat(39)));
    env.bundle(&a);
    let b_id = env.bundle(&b);
    env.put_tool(&a, &tool_doc("search", "v1"));
    let tools = [format!("{a}/search"), format!("{b}/search")];
    let tools: Vec<&str> = tools.iter().map(String::as_str).collect();
    let file = env.input(&tool_doc("search", "v1"));
    let args = ["tool", "put", "--bundle", &b, &file];
    refused(&env, &args, &"Ri".repeat(32), &tools);
    let error = env.json_error(&args, 5);
    assert!(
        error.error.message.contains(&format!(
            "exported as `<bundle slug>__search`, and the bundle slugs '{a}' and '{b}' come out the same in it"
        )),
        "{error:?}"
    );
    assert_eq!(
        error.error.hint.as_deref(),
        Some(
            "give one of the bundles a slug that differs from the other's within its first \
                characters in ASCII (`toolctl bundle put --id <bundleID> --slug NEW`)"
        )
    );
    // The way out the hint gives works.
    env.run(&["bundle", "put", "--id", &b_id, "--slug", "other"])
        .success();
    env.run(&["tool", "put", "--bundle", "other", &file])
        .success();
}
