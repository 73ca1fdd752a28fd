//! The built-in bundle: listed like any bundle on an empty catalog, with full
//! schemas, read-only except for its enabled flags, which live in `toolctl.json`.

use crate::common::{TestEnv, tool_doc, tool_doc_with, tool_view};
use serde_json::json;

const BUILTIN_ID: &str = "0190a000-0000-7000-8000-000000000000";

#[test]
fn empty_catalog_lists_the_enabled_builtins() {
    let env = TestEnv::new();
    let run = env.run(&["tool", "list"]);
    run.success();
    assert_eq!(run.stderr, "");
    insta::assert_snapshot!(run.stdout, @r"
    TOOL                    TYPE    STATUS   DESCRIPTION
    builtin/file-search@v1  native  enabled  Search files by path/name under the workspace.
    builtin/now@v1          native  enabled  Tell the current date and time in UTC.
    builtin/readfile@v1     native  enabled  Read a UTF-8 text file from the workspace.
    ");

    let list = env.tool_list(&[]);
    let refs: Vec<_> = list.items.iter().map(|t| t.reference.as_str()).collect();
    assert_eq!(
        refs,
        [
            "builtin/file-search@v1",
            "builtin/now@v1",
            "builtin/readfile@v1"
        ]
    );
    assert!(list.problems.is_empty());
    for item in &list.items {
        assert!(item.is_built_in && item.available && item.is_enabled);
        assert_eq!(item.bundle_id, BUILTIN_ID);
        assert_eq!(item.path, None);
    }

    let all = env.tool_list(&["--include-disabled"]);
    let exec = all
        .items
        .iter()
        .find(|t| t.slug == "exec")
        .expect("--include-disabled lists exec");
    assert!(!exec.is_enabled);
    assert_eq!(exec.status, "disabled");
    assert_eq!(all.items.len(), 4);
}

#[test]
fn builtins_are_listed_without_any_catalog_on_disk() {
    let env = TestEnv::uninit_default();
    assert_eq!(
        env.refs(&[]),
        [
            "builtin/file-search@v1",
            "builtin/now@v1",
            "builtin/readfile@v1"
        ]
    );
    assert!(!env.catalog().exists());
}

#[test]
fn builtin_readfile_has_its_full_arg_schema() {
    let env = TestEnv::new();
    let (view, extra) = tool_view(
        env.json(&["tool", "get", "builtin/readfile"]),
        &["document", "usage"],
    );
    assert_eq!(view.reference, "builtin/readfile@v1");
    assert!(view.is_built_in);
    assert_eq!(view.path, None);
    let schema = &extra["document"]["argSchema"];
    assert_eq!(schema["type"], "object");
    let properties: Vec<_> = schema["properties"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(properties, ["path", "max_bytes"]);
    assert_eq!(schema["properties"]["path"]["type"], "string");
    assert_eq!(schema["properties"]["max_bytes"]["type"], "integer");
    assert_eq!(schema["required"], json!(["path"]));
    assert_eq!(extra["document"]["isBuiltIn"], true);
    assert_eq!(extra["document"]["impl"], json!({ "func": "readfile" }));

    // The other built-ins carry their arguments too.
    let search = env.json(&["tool", "get", "builtin/file-search"]);
    let props = &search["document"]["argSchema"]["properties"];
    assert!(props.get("max_results").is_some(), "{props}");
    assert!(props.get("include_hidden").is_some(), "{props}");
    let exec = env.json(&["tool", "get", "builtin/exec"]);
    assert_eq!(exec["isEnabled"], false);
    assert_eq!(exec["document"]["safe"], false);
}

#[test]
fn builtin_tool_get_human_form() {
    let env = TestEnv::new();
    let run = env.run(&["tool", "get", "builtin/now"]);
    run.success();
    assert_eq!(run.stderr, "");
    insta::assert_snapshot!(run.stdout, @r#"
    FIELD        VALUE
    ref          builtin/now@v1
    toolID       0190a000-0000-7000-8000-000000000003
    displayName  Current time
    description  Tell the current date and time in UTC.
    type         native
    status       enabled
    tags         time, clock
    createdAt    2024-07-01T00:00:00Z
    modifiedAt   2024-07-01T00:00:00Z
    calls        0
    path         (built in)

    argSchema:
    {
      "type": "object",
      "properties": {},
      "additionalProperties": false
    }

    outputSchema:
    {
      "type": "object",
      "properties": {
        "utc": {
          "type": "string",
          "format": "date-time"
        },
        "unix_ms": {
          "type": "integer"
        }
      },
      "required": [
        "utc",
        "unix_ms"
      ]
    }

    impl:
    {
      "func": "now"
    }
    "#);
}

#[test]
fn builtin_content_is_read_only() {
    let env = TestEnv::new();
    let bundles = env.catalog().join("bundles");
    let config_before = std::fs::read(env.catalog().join("toolctl.json")).unwrap();

    let file = env.input(&tool_doc("mine", "v1"));
    let run = env.run(&["tool", "put", "--bundle", "builtin", &file]);
    run.failure(6).stderr_has("built-in bundle is read-only");
    let err = env.json_error(&["tool", "put", "--bundle", BUILTIN_ID, &file], 6);
    assert_eq!(err.error.code, "FORBIDDEN");

    // A file naming the built-in bundle by ID is no way around it.
    let mut doc = tool_doc("mine", "v1");
    doc["bundleID"] = BUILTIN_ID.into();
    let file = env.input(&doc);
    env.run(&["tool", "put", &file]).failure(6);

    env.run(&["tool", "delete", "builtin/now"])
        .failure(6)
        .stderr_has("built in and cannot be deleted");
    assert_eq!(
        env.json_error(&["tool", "delete", "builtin/now@v1"], 6)
            .error
            .code,
        "FORBIDDEN"
    );
    assert_eq!(
        env.json_error(&["bundle", "delete", "builtin"], 6)
            .error
            .code,
        "FORBIDDEN"
    );
    env.run(&["bundle", "restore", "builtin"]).failure(6);
    // Replacing the built-in bundle by its ID is a PUT on it.
    assert_eq!(
        env.json_error(&["bundle", "put", "--id", BUILTIN_ID, "--slug", "other"], 6)
            .error
            .code,
        "FORBIDDEN"
    );
    // Its slug is taken.
    let err = env.json_error(&["bundle", "put", "--slug", "builtin"], 5);
    assert_eq!(err.error.code, "CONFLICT");

    // Nothing was written anywhere.
    assert_eq!(std::fs::read_dir(&bundles).unwrap().count(), 0);
    assert_eq!(
        std::fs::read(env.catalog().join("toolctl.json")).unwrap(),
        config_before
    );
    assert_eq!(env.refs(&["--include-disabled"]).len(), 4);
}

#[test]
fn builtin_tool_flags_live_in_toolctl_json() {
    let env = TestEnv::new();
    env.edit_config(|c| c["allowedHosts"] = json!(["api.example.com"]));
    let before = env.config();

    let run = env.run(&["tool", "disable", "builtin/now"]);
    run.success();
    assert_eq!(run.stdout, "");
    assert_eq!(run.stderr, "Tool builtin/now@v1 disabled\n");
    assert_eq!(
        env.refs(&[]),
        ["builtin/file-search@v1", "builtin/readfile@v1"]
    );
    let all = env.tool_list(&["--include-disabled"]);
    let now = all.items.iter().find(|t| t.slug == "now").unwrap();
    assert_eq!(now.status, "disabled");
    assert!(!now.is_enabled);

    // Only the flag was added; everything else in toolctl.json is as it was.
    let mut after = env.config();
    assert_eq!(after["builtin"]["tools"]["now"]["isEnabled"], false);
    after["builtin"]["tools"]
        .as_object_mut()
        .unwrap()
        .shift_remove("now");
    assert_eq!(after, before);
    assert_eq!(after["allowedHosts"], json!(["api.example.com"]));

    // exec can be switched on the same way.
    env.run(&["tool", "enable", "builtin/exec"]).success();
    env.run(&["tool", "enable", "builtin/now"]).success();
    assert_eq!(
        env.refs(&[]),
        [
            "builtin/exec@v1",
            "builtin/file-search@v1",
            "builtin/now@v1",
            "builtin/readfile@v1"
        ]
    );
}

#[test]
fn disabling_the_builtin_bundle_hides_every_builtin() {
    let env = TestEnv::new();
    let run = env.run(&["bundle", "disable", "builtin"]);
    run.success();
    assert_eq!(run.stderr, "Bundle builtin disabled\n");
    assert_eq!(env.config()["builtin"]["isEnabled"], false);

    assert_eq!(env.refs(&[]), Vec::<String>::new());
    let all = env.tool_list(&["--include-disabled"]);
    assert_eq!(all.items.len(), 4);
    for item in &all.items {
        assert_eq!(item.status, "bundle disabled", "{item:?}");
        assert!(!item.bundle_enabled);
    }
    assert!(env.bundle_list(&[]).items.is_empty());
    let listed = env.bundle_list(&["--include-disabled"]);
    assert_eq!(listed.items.len(), 1);
    assert!(!listed.items[0].is_enabled);

    // Its tools cannot change while it is disabled.
    assert_eq!(
        env.json_error(&["tool", "disable", "builtin/now"], 6)
            .error
            .code,
        "FORBIDDEN"
    );

    env.run(&["bundle", "enable", "builtin"]).success();
    assert_eq!(env.refs(&[]).len(), 3);
}

/// The `exec` policy holds for the function, not for one tool: a tool of a user's that names
/// `exec` (`impl.func`) is refused by `tool put`, reported by `validate` and unavailable
/// (not invoked, not picked) while `builtin/exec` is disabled; it runs once the policy is
/// on, and is unsafe whatever its own `safe` says (such a tool once ran `sh -c id` with the
/// policy off).
#[test]
fn a_users_tool_naming_exec_follows_the_exec_policy() {
    let env = TestEnv::new();
    env.bundle("ops");
    let marker = env.work().join("ran");
    let marker_arg = marker.to_str().unwrap().to_owned();
    let wrapper = tool_doc_with(
        "run",
        "v1",
        json!({
            "description": "Run a command on the machine.",
            "impl": { "func": "exec" },
            "safe": true,
            "argSchema": {
                "type": "object",
                "properties": { "argv": { "type": "array", "items": { "type": "string" } } }
            }
        }),
    );

    let put = env.try_put_tool("ops", &wrapper);
    put.failure(3)
        .stdout_has("/impl/func: it runs the native function 'exec'")
        .stdout_has(
            "only while builtin/exec, the catalog's policy switch for running commands, is enabled",
        );
    assert!(
        env.refs(&["--include-disabled"])
            .iter()
            .all(|r| r != "ops/run@v1")
    );

    // As a pull request or an archive would bring it.
    env.put_tool_by_hand("ops", &wrapper);
    let args = json!({ "argv": ["touch", marker_arg] }).to_string();
    let refused = env.run(&["invoke", "ops/run", "--args", &args]);
    refused
        .failure(6)
        .stderr_has("is unavailable: it runs the native function 'exec'")
        .stderr_has("hint: enable it with `toolctl tool enable builtin/exec`");
    assert!(!marker.exists(), "the command ran with the exec policy off");
    let listed = env.tool_list(&["--include-disabled"]);
    let run = listed
        .items
        .iter()
        .find(|t| t.reference == "ops/run@v1")
        .unwrap();
    assert!(!run.available, "{run:?}");
    env.run(&["validate"])
        .failure(3)
        .stdout_has("error[exec]: it runs the native function 'exec'");
    let offered = |extra: &[&str]| {
        let mut args = vec![
            "--json",
            "pick",
            "run a command on the machine",
            "--min-score",
            "0.000001",
        ];
        args.extend_from_slice(extra);
        let picks = env.run(&args);
        picks.success();
        picks.json()["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["ref"] == "ops/run@v1")
    };
    assert!(!offered(&["--allow-unsafe"]));

    env.run(&["tool", "enable", "builtin/exec"]).success();
    env.run(&["invoke", "ops/run", "--args", &args]).success();
    assert!(
        marker.exists(),
        "the command did not run with the exec policy on"
    );
    env.run(&["validate"]).success();
    assert!(
        !offered(&[]),
        "a tool running exec is unsafe whatever its 'safe' says"
    );
    assert!(offered(&["--allow-unsafe"]));

    // Turning the policy off again makes it unavailable again (the index sees the change).
    std::fs::remove_file(&marker).unwrap();
    env.run(&["tool", "disable", "builtin/exec"]).success();
    env.run(&["invoke", "ops/run", "--args", &args]).failure(6);
    assert!(!marker.exists());
    assert!(!offered(&["--allow-unsafe"]));
}

/// A `go` tool names its function in `impl.goFunc`, and the errors about that function point
/// there (not at `/impl/func`, a field the file does not have), for the `exec` policy and for
/// a function this binary lacks.
#[test]
fn errors_about_a_go_tools_function_point_at_impl_go_func() {
    let env = TestEnv::new();
    env.bundle("ops");
    let go = |slug: &str, func: &str| {
        tool_doc_with(
            slug,
            "v1",
            json!({ "type": "go", "impl": { "goFunc": func } }),
        )
    };
    let runner = go("run", "exec");
    env.try_put_tool("ops", &runner)
        .failure(3)
        .stdout_has("/impl/goFunc: it runs the native function 'exec'");

    env.put_tool_by_hand("ops", &runner);
    env.put_tool_by_hand("ops", &go("weather", "GetWeather"));
    let run = env.run(&["--json", "validate"]);
    run.failure(3);
    let pointers: Vec<(String, String)> = run.json()["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap().to_owned(),
                f["pointer"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    for rule in ["exec", "native"] {
        assert!(
            pointers.contains(&(rule.to_owned(), "/impl/goFunc".to_owned())),
            "{rule}: {pointers:?}\n{run}"
        );
    }
    assert!(
        !pointers.iter().any(|(_, p)| p == "/impl/func"),
        "{pointers:?}"
    );
}
