//! Whole outputs of representative commands: exit code, stdout and stderr together, pinned with
//! `insta`, so a change to any of the three shows in one diff. Temporary paths read `[TMP]` and
//! UUIDs `[UUID]`.
//!
//! The hints here are the library's remedies (`catalog::Hint`, `ToolBundle`) as the CLI words
//! them: the library names no flag or command, the command line does.

use crate::common::{Run, TestEnv, tool_doc};
use serde_json::json;

/// `run` as one text: exit code, then stdout and stderr.
fn shot(env: &TestEnv, run: &Run) -> String {
    env.normalize(&format!(
        "exit: {}\n--- stdout\n{}--- stderr\n{}",
        run.code(),
        run.stdout,
        run.stderr
    ))
}

fn shot_of(env: &TestEnv, args: &[&str]) -> String {
    shot(env, &env.run(args))
}

#[test]
fn the_built_in_bundle_refuses_writes_with_a_way_out() {
    let env = TestEnv::new();
    let file = env.input(&tool_doc("mine", "v1"));
    insta::assert_snapshot!(shot_of(&env, &["tool", "put", "--bundle", "builtin", &file]), @r"
        exit: 6
        --- stdout
        --- stderr
        error: the built-in bundle is read-only: tools cannot be added to it
        hint: put the tool into a bundle of your own (`toolctl bundle put --slug NAME`)
        ");
    insta::assert_snapshot!(shot_of(&env, &["tool", "delete", "builtin/now"]), @r"
        exit: 6
        --- stdout
        --- stderr
        error: builtin/now@v1 is built in and cannot be deleted
        hint: disable it instead: toolctl tool disable builtin/now@v1
        ");
    insta::assert_snapshot!(shot_of(&env, &["bundle", "delete", "builtin"]), @r"
        exit: 6
        --- stdout
        --- stderr
        error: the built-in bundle cannot be deleted
        hint: disable it instead: toolctl bundle disable builtin
        ");
    let zip = env.work().join("builtin.zip");
    insta::assert_snapshot!(
        shot_of(&env, &["bundle", "export", "builtin", "--output", zip.to_str().unwrap()]),
        @r"
            exit: 6
            --- stdout
            --- stderr
            error: the built-in bundle cannot be exported: its tools are compiled into every toolctl
            hint: to hand its tools to a model, use `toolctl export --provider P --bundle builtin`
            "
    );
}

#[test]
fn a_deleted_or_disabled_bundle_says_how_to_bring_it_back() {
    let env = TestEnv::new();
    env.bundle("a");
    env.put_tool("a", &tool_doc("t", "v1"));
    env.run(&["bundle", "disable", "a"]).success();
    insta::assert_snapshot!(shot_of(&env, &["tool", "disable", "a/t"]), @r"
        exit: 6
        --- stdout
        --- stderr
        error: bundle 'a' is disabled; its tools cannot change
        hint: enable it first: toolctl bundle enable a
        ");
    env.run(&["bundle", "enable", "a"]).success();
    env.run(&["bundle", "delete", "a"]).success();
    let file = env.input(&tool_doc("u", "v1"));
    insta::assert_snapshot!(shot_of(&env, &["tool", "put", "--bundle", "a", &file]), @r"
        exit: 6
        --- stdout
        --- stderr
        error: bundle 'a' is deleted: cannot add a tool to it
        hint: restore it first: toolctl bundle restore a
        ");
    // The deleted bundle still holds its slug.
    insta::assert_snapshot!(shot_of(&env, &["bundle", "put", "--slug", "a"]), @r"
        exit: 5
        --- stdout
        --- stderr
        error: bundle slug 'a' is already used by bundle [UUID]
        hint: bundle [UUID] holding this slug is deleted; restore it (`toolctl bundle restore [UUID]`) or reap it first
        ");
}

#[test]
fn a_slug_taken_by_a_live_bundle_is_replaced_by_its_id() {
    let env = TestEnv::new();
    env.bundle("a");
    insta::assert_snapshot!(shot_of(&env, &["bundle", "put", "--slug", "a"]), @r"
        exit: 5
        --- stdout
        --- stderr
        error: bundle slug 'a' is already used by bundle [UUID]
        hint: to replace that bundle, pass --id [UUID]
        ");
}

#[test]
fn a_new_tool_without_its_bundle_or_with_two_is_named_at_bundle_id() {
    let env = TestEnv::new();
    let a = env.bundle("a");
    env.bundle("b");
    let file = env.input(&tool_doc("t", "v1"));
    insta::assert_snapshot!(shot_of(&env, &["tool", "put", &file]), @r"
        exit: 3
        --- stdout
        --- stderr
        error: [TMP]/inputs/0.json: /bundleID: no bundle given: pass --bundle BUNDLE or set bundleID in the file
        ");
    let mut doc = tool_doc("t", "v1");
    doc["bundleID"] = json!(a);
    let file = env.input(&doc);
    insta::assert_snapshot!(shot_of(&env, &["tool", "put", "--bundle", "b", &file]), @r"
        exit: 3
        --- stdout
        --- stderr
        error: [TMP]/inputs/1.json: /bundleID: bundleID [UUID] is not the bundle given by --bundle b ([UUID])
        ");
    insta::assert_snapshot!(shot_of(&env, &["--json", "tool", "put", "--bundle", "b", &file]), @r#"
        exit: 3
        --- stdout
        {
          "ok": false,
          "error": {
            "code": "VALIDATION_ERROR",
            "message": "[TMP]/inputs/1.json: /bundleID: bundleID [UUID] is not the bundle given by --bundle b ([UUID])",
            "details": {
              "file": "[TMP]/inputs/1.json",
              "problems": [
                {
                  "pointer": "/bundleID",
                  "message": "bundleID [UUID] is not the bundle given by --bundle b ([UUID])"
                }
              ]
            }
          }
        }
        --- stderr
        "#);
}

#[test]
fn writing_over_an_existing_archive_is_asked_for() {
    let env = TestEnv::new();
    env.bundle("a");
    env.put_tool("a", &tool_doc("t", "v1"));
    let zip = env.work().join("a.zip");
    let zip = zip.to_str().unwrap();
    env.run(&["bundle", "export", "a", "--output", zip])
        .success();
    insta::assert_snapshot!(shot_of(&env, &["bundle", "export", "a", "--output", zip]), @r"
        exit: 5
        --- stdout
        --- stderr
        error: [TMP]/work/a.zip already exists
        hint: pass --force to replace it
        ");
    // An import that collides says which of --as-new and --slug lets it in.
    insta::assert_snapshot!(shot_of(&env, &["bundle", "import", zip]), @r"
        exit: 5
        --- stdout
        --- stderr
        error: cannot import bundle 'a': 3 conflicts with the catalog
        caused by: bundleID [UUID] is already in the catalog: bundle a
        caused by: bundle slug 'a' is already used by bundle [UUID]
        caused by: toolID [UUID] of tools/t/v1/tool.json is already used by a/t@v1
        hint: nothing was written; to import a copy with new IDs and another slug, add --as-new --slug NEW
        ");
    insta::assert_snapshot!(shot_of(&env, &["bundle", "import", zip, "--as-new"]), @r"
        exit: 5
        --- stdout
        --- stderr
        error: cannot import bundle 'a': bundle slug 'a' is already used by bundle [UUID]
        hint: nothing was written; to import it under another slug, add --slug NEW
        ");
    insta::assert_snapshot!(shot_of(&env, &["bundle", "import", zip, "--slug", "other"]), @r"
        exit: 5
        --- stdout
        --- stderr
        error: cannot import bundle 'other': 2 conflicts with the catalog
        caused by: bundleID [UUID] is already in the catalog: bundle a
        caused by: toolID [UUID] of tools/t/v1/tool.json is already used by a/t@v1
        hint: nothing was written; to import a copy with new IDs, add --as-new
        ");
}

#[test]
fn the_tool_list_is_a_table() {
    let env = TestEnv::new();
    env.bundle("weather");
    env.put_tool("weather", &tool_doc("forecast", "v1"));
    env.put_tool("weather", &tool_doc("forecast", "v2"));
    env.run(&["tool", "disable", "weather/forecast@v2"])
        .success();
    insta::assert_snapshot!(shot_of(&env, &["tool", "list"]), @r"
        exit: 0
        --- stdout
        TOOL                    TYPE    STATUS   DESCRIPTION
        builtin/file-search@v1  native  enabled  Search files by path/name under the workspace.
        builtin/now@v1          native  enabled  Tell the current date and time in UTC.
        builtin/readfile@v1     native  enabled  Read a UTF-8 text file from the workspace.
        weather/forecast@v1     native  enabled
        --- stderr
        ");
    insta::assert_snapshot!(shot_of(&env, &["tool", "list", "--include-disabled", "--bundle", "weather"]), @r"
        exit: 0
        --- stdout
        TOOL                 TYPE    STATUS    DESCRIPTION
        weather/forecast@v1  native  enabled
        weather/forecast@v2  native  disabled
        --- stderr
        ");
}

#[test]
fn requests_out_of_range_name_their_flag_with_a_hint() {
    let env = TestEnv::new();
    insta::assert_snapshot!(shot_of(&env, &["search", " "]), @r#"
        exit: 3
        --- stdout
        --- stderr
        error: the search query is empty
        hint: say what the tool should do, e.g. `toolctl search "weather forecast"`; `toolctl tool list` lists everything
        "#);
    insta::assert_snapshot!(shot_of(&env, &["pick", " "]), @r#"
        exit: 3
        --- stdout
        --- stderr
        error: the task is empty
        hint: say what the tools are for, e.g. `toolctl pick "weather in Oslo tomorrow"`
        "#);
    insta::assert_snapshot!(shot_of(&env, &["pick", "weather", "--max", "0"]), @r"
        exit: 3
        --- stdout
        --- stderr
        error: --max 0 is out of range
        hint: pick 1 to 128 tools (128 is the most OpenAI takes in one request)
        ");
    insta::assert_snapshot!(shot_of(&env, &["pick", "weather", "--min-score", "2"]), @r"
        exit: 3
        --- stdout
        --- stderr
        error: --min-score 2 is out of range
        hint: scores are between 0 and 1
        ");
    insta::assert_snapshot!(shot_of(&env, &["pick", "weather", "--scorer", "llm"]), @r"
        exit: 3
        --- stdout
        --- stderr
        error: the llm scorer needs a chat endpoint
        hint: set pick.llm.baseUrl and model in toolctl.json, or pass --llm-url and --llm-model
        ");
    let agent = "agent-3f2b8c1e-9d4a-4e6b-8a7c-000000000001";
    insta::assert_snapshot!(shot_of(&env, &["attach", agent, "--query", "x", "--limit", "0"]), @r"
        exit: 3
        --- stdout
        --- stderr
        error: --limit 0 is out of range: it must be between 1 and 25
        hint: the largest limit is FIND_TOOLS_MAX_LIMIT (25), set in toolctl.json (attach.findToolsMaxLimit) or the environment
        ");
    insta::assert_snapshot!(shot_of(&env, &["attach", agent, "--query", "x", "--min-score", "101"]), @r"
        exit: 3
        --- stdout
        --- stderr
        error: --min-score 101 is out of range: it must be between 0 and 100
        hint: match scores are on a 0–100 scale (35 by default)
        ");
}

#[test]
fn validate_reports_every_problem_with_its_place() {
    // The corpus of test_validate: a valid catalog with a case's files laid over it.
    let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/validate");
    let env = TestEnv::uninit();
    crate::common::copy_tree(&corpus.join("valid"), env.catalog());
    for case in ["warnings", "name"] {
        crate::common::copy_tree(&corpus.join("invalid").join(case), env.catalog());
        let _ = std::fs::remove_file(env.catalog().join("expected.txt"));
    }
    let mut cmd = env.bare_command();
    cmd.current_dir(env.catalog()).arg("validate");
    insta::assert_snapshot!(shot(&env, &Run::of(cmd, None)), @r#"
        exit: 3
        --- stdout
        bundles/[UUID]/tools/a_b/v1/tool.json:5:3: error[name]: the slug 'a_b' has an underscore at character 2; a slug holds only letters, digits and '-' (at /slug)
        bundles/[UUID]/tools/sloppy/v1/tool.json:8:3: warning[description]: the tool has no description; models choose tools by what it says (at /description)
        bundles/[UUID]/tools/sloppy/v1/tool.json:18:7: warning[description]: argument 'city' has no description (at /argSchema/properties/city)
        bundles/[UUID]/tools/sloppy/v1/tool.json:23:9: warning[description]: the description of argument 'note' is 1100 characters long; providers take at most 1024, and every request pays for it (at /argSchema/properties/note/description)
        bundles/[UUID]/tools/sloppy/v1/tool.json:28:5: warning[unsafe-method]: a POST tool is taken to change things, so pick hides it without --allow-unsafe; say so with "safe": false (or true if it is harmless) (at /impl/method)
        bundles/[UUID]/tools/sloppy/v1/tool.json:33:3: warning[unknown-field]: unknown field 'descripton' (did you mean 'description'?); it is kept but toolctl does not read it (at /descripton)
        1 error and 5 warnings in 6 files
        --- stderr
        "#);
}
