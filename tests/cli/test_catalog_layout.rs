//! The catalog's folders as git, editors and people leave them: a folder the catalog needs that
//! is a file (a symlink git checked out as text), stray files where folders go, folder names
//! that differ only by case, and slugs that start with `-`.

use crate::common::{TestEnv, tool_doc, write_file};
use std::path::Path;

const NOT_A_FOLDER: &str = "must be a folder of the catalog, and is a file";

/// A catalog with bundle `b` holding `hello@v1`; returns the bundle's ID.
fn catalog_with_a_tool(env: &TestEnv) -> String {
    let id = env.bundle("b");
    env.put_tool("b", &tool_doc("hello", "v1"));
    id
}

/// `path` replaced by a small text file, as git checks out a symlink where `core.symlinks` is
/// false.
fn make_a_file(env: &TestEnv, path: &Path) {
    std::fs::rename(path, env.root().join("moved-away")).unwrap();
    std::fs::write(path, "../shared/folder").unwrap();
}

/// `index status` counts `folder`, which is not a folder, among its problems and names it, as
/// `tool list` does.
#[track_caller]
fn index_status_counts_and_shows(env: &TestEnv, folder: &Path) {
    assert_eq!(crate::test_index::status(env).problems(), 1);
    let run = env.run(&["index", "status"]);
    run.success()
        .stderr_has(&format!("{}: {NOT_A_FOLDER}", folder.display()));
    let row = run
        .stdout
        .lines()
        .find(|line| line.contains("problems"))
        .unwrap_or_else(|| panic!("{run}"));
    assert!(row.trim_end().ends_with(" 1"), "{run}");
}

/// `bundles` a file: every reader says so (stderr, and `problems` under `--json`) instead of
/// showing the built-in tools alone as if that were the catalog; a write is refused with the
/// same words and writes nothing.
#[test]
fn readers_warn_when_bundles_is_a_file_and_writes_are_refused() {
    let env = TestEnv::new();
    catalog_with_a_tool(&env);
    let bundles = env.catalog().join("bundles");
    make_a_file(&env, &bundles);

    let run = env.run(&["tool", "list"]);
    run.success()
        .stdout_has("builtin/now@v1")
        .stderr_has(&format!("{}: {NOT_A_FOLDER}", bundles.display()));
    let list = env.tool_list(&[]);
    assert_eq!(list.problems.len(), 1, "{:?}", list.problems);
    assert_eq!(list.problems[0].path, bundles);
    assert!(list.problems[0].message.starts_with(NOT_A_FOLDER));
    let listed = env.bundle_list(&[]);
    assert_eq!(listed.problems.len(), 1, "{:?}", listed.problems);
    assert_eq!(listed.problems[0].path, bundles);
    index_status_counts_and_shows(&env, &bundles);
    env.run(&["search", "hello"])
        .success()
        .stderr_has(NOT_A_FOLDER);
    env.run(&["pick", "hello"])
        .success()
        .stderr_has(NOT_A_FOLDER);
    env.run(&[
        "attach",
        "0190a000-0000-7000-8000-00000000abcd",
        "--query",
        "hello",
    ])
    .success()
    .stderr_has(NOT_A_FOLDER);
    // Readers that read the files themselves, not the index.
    env.run(&["export", "--provider", "openai"])
        .success()
        .stderr_has(NOT_A_FOLDER);
    env.run(&["tool", "get", "b/hello"])
        .failure(4)
        .stderr_has(NOT_A_FOLDER);

    let put = env.run(&["--json", "bundle", "put", "--slug", "other"]);
    put.failure(3);
    let error = &put.json()["error"];
    assert_eq!(error["code"], "VALIDATION_ERROR", "{put}");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.starts_with(&format!("{}: {NOT_A_FOLDER}", bundles.display()))
            && message.ends_with("nothing was written"),
        "{put}"
    );
    assert_eq!(
        std::fs::read_to_string(&bundles).unwrap(),
        "../shared/folder"
    );
}

/// A bundle's `tools` a file, or a symlink to nothing: the bundle is listed, its tools are
/// not, and readers say why; `tool put` into it is refused and writes nothing.
#[test]
fn readers_warn_when_a_bundles_tools_is_not_a_folder() {
    let env = TestEnv::new();
    let id = catalog_with_a_tool(&env);
    let tools = env.bundle_dir(&id).join("tools");
    make_a_file(&env, &tools);

    let list = env.tool_list(&[]);
    assert!(list.items.iter().all(|t| t.bundle == "builtin"));
    assert_eq!(list.problems.len(), 1, "{:?}", list.problems);
    assert_eq!(list.problems[0].path, tools);
    assert!(list.problems[0].message.starts_with(NOT_A_FOLDER));
    index_status_counts_and_shows(&env, &tools);
    env.run(&["bundle", "get", "b"])
        .success()
        .stderr_has(&format!("{}: {NOT_A_FOLDER}", tools.display()));
    // pick and attach read the index, which holds no tool of the bundle: they say why, once
    // (with --json too: on stderr, their documents have no problems).
    let warning = format!("warning: skipped {}: {NOT_A_FOLDER}", tools.display());
    for args in [
        &["pick", "hello"][..],
        &["--json", "pick", "hello"],
        &[
            "attach",
            "0190a000-0000-7000-8000-00000000abcd",
            "--query",
            "hello",
        ],
    ] {
        let run = env.run(args);
        run.success();
        let warned: Vec<&str> = run
            .stderr
            .lines()
            .filter(|l| l.contains("skipped"))
            .collect();
        assert_eq!(warned.len(), 1, "{run}");
        assert!(warned[0].starts_with(&warning), "{run}");
        assert!(!run.stdout.contains("b/hello"), "{run}");
    }
    let put = env.try_put_tool("b", &tool_doc("other", "v1"));
    put.failure(3);
    assert!(
        put.json()["error"]["message"]
            .as_str()
            .unwrap()
            .ends_with("nothing was written"),
        "{put}"
    );
    assert_eq!(std::fs::read_to_string(&tools).unwrap(), "../shared/folder");

    std::fs::remove_file(&tools).unwrap();
    std::os::unix::fs::symlink("../nowhere", &tools).unwrap();
    let list = env.tool_list(&[]);
    assert_eq!(list.problems.len(), 1, "{:?}", list.problems);
    assert_eq!(list.problems[0].path, tools);
    assert!(
        list.problems[0]
            .message
            .contains("is a symlink to no folder"),
        "{:?}",
        list.problems
    );
}

/// Files where the catalog keeps folders (`bundles/NOTES`, `tools/README.md`, a file where a
/// version folder goes) are read by nobody: `validate` warns of each, naming it (rule
/// `stray`; an error only with `--strict`); hidden files (`.gitkeep`) are not mentioned, and
/// readers say nothing of any of them.
#[test]
fn validate_warns_of_stray_files_where_folders_go() {
    let env = TestEnv::new();
    let id = catalog_with_a_tool(&env);
    let tools = env.bundle_dir(&id).join("tools");
    write_file(&env.catalog().join("bundles/NOTES"), "notes");
    write_file(&tools.join("README.md"), "# tools");
    write_file(&tools.join(".gitkeep"), "");
    write_file(&tools.join("hello/v2"), "{}");

    let run = env.run(&["--json", "validate"]);
    run.success();
    let report = run.json();
    // In path order: a bundle folder (its ID) sorts before NOTES.
    let stray: Vec<(String, String)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "stray")
        .map(|f| {
            assert_eq!(f["severity"], "warning", "{f}");
            (
                f["file"].as_str().unwrap().to_owned(),
                f["message"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let file = |p: &Path| p.display().to_string();
    assert_eq!(
        stray,
        [
            (
                file(&tools.join("README.md")),
                "not a folder where each entry is a tool slug folder: toolctl reads nothing from it"
                    .to_owned()
            ),
            (
                file(&tools.join("hello/v2")),
                "not a folder where each entry is a version folder: toolctl reads nothing from it"
                    .to_owned()
            ),
            (
                file(&env.catalog().join("bundles/NOTES")),
                "not a folder where each entry is a bundle folder: toolctl reads nothing from it"
                    .to_owned()
            ),
        ],
        "{report}"
    );
    assert!(!run.stdout.contains(".gitkeep"), "{run}");
    env.run(&["validate", "--strict"])
        .failure(3)
        .stdout_has("tools/README.md: error[stray]");
    let list = env.run(&["tool", "list"]);
    list.success().stdout_has("b/hello@v1");
    assert_eq!(list.stderr, "", "{list}");
}

/// Slug or version folders that differ only by case (`Hello` beside `hello`) are one folder on
/// macOS and Windows: `validate` warns, naming both (rule `case-collision`), and `tool put`
/// refuses to make such a pair (`CONFLICT`, nothing written). Exported names keep case, so
/// they do not collide; bundles (folders named by ID) may have slugs that differ by case.
#[test]
fn names_that_differ_only_by_case_are_warned_of_and_not_written() {
    let env = TestEnv::new();
    let id = catalog_with_a_tool(&env);
    let tools = env.bundle_dir(&id).join("tools");

    // tool put refuses a slug, and a version, that differs only by case.
    for (doc, what, other) in [
        (tool_doc("Hello", "v1"), "slug", "hello"),
        (tool_doc("hello", "V1"), "version", "v1"),
    ] {
        let put = env.try_put_tool("b", &doc);
        put.failure(5);
        let error = &put.json()["error"];
        assert_eq!(error["code"], "CONFLICT", "{put}");
        assert!(
            error["message"].as_str().unwrap().contains(&format!(
                "differs only by case from the {what} folder '{other}'"
            )),
            "{put}"
        );
    }
    let mut slugs: Vec<String> = std::fs::read_dir(&tools)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    slugs.sort();
    assert_eq!(slugs, ["hello"]);
    assert_eq!(
        std::fs::read_dir(tools.join("hello")).unwrap().count(),
        1,
        "no version folder was added"
    );

    // Made by hand (git pull from a Linux machine): validate warns of both pairs.
    let copy = |from: &str, to: &str| {
        let to = tools.join(to);
        std::fs::create_dir_all(&to).unwrap();
        let mut doc = crate::common::read_json(&tools.join(from).join("tool.json"));
        let parts: Vec<&str> = to
            .strip_prefix(&tools)
            .unwrap()
            .to_str()
            .unwrap()
            .split('/')
            .collect();
        doc["slug"] = parts[0].into();
        doc["version"] = parts[1].into();
        doc["toolID"] = uuid::Uuid::now_v7().to_string().into();
        std::fs::write(
            to.join("tool.json"),
            serde_json::to_vec_pretty(&doc).unwrap(),
        )
        .unwrap();
    };
    copy("hello/v1", "Hello/v1");
    copy("hello/v1", "hello/V1");
    let run = env.run(&["--json", "validate"]);
    run.success();
    let report = run.json();
    let found: Vec<(String, String)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "case-collision")
        .map(|f| {
            assert_eq!(f["severity"], "warning", "{f}");
            (
                f["file"].as_str().unwrap().to_owned(),
                f["message"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(found.len(), 2, "{report}");
    assert_eq!(found[0].0, tools.join("hello").display().to_string());
    assert!(
        found[0].1.starts_with(&format!(
            "tool slug folder 'hello' and '{}' differ only by case",
            tools.join("Hello").display()
        )),
        "{report}"
    );
    assert_eq!(found[1].0, tools.join("hello/v1").display().to_string());
    assert!(
        found[1].1.starts_with(&format!(
            "version folder 'v1' and '{}' differ only by case",
            tools.join("hello/V1").display()
        )),
        "{report}"
    );
    env.run(&["validate", "--strict"])
        .failure(3)
        .stdout_has("error[case-collision]");

    // Exported names keep case: Hello and hello are two names, no name-collision.
    let exported = env.json(&["export", "--provider", "openai", "--bundle", "b"]);
    let mut names: Vec<&str> = exported
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["Hello", "hello"], "{exported}");

    // Bundle folders are named by ID, so bundle slugs that differ by case share no folder.
    env.bundle("B");
    env.put_tool("B", &tool_doc("hello", "v1"));
    assert!(env.refs(&[]).contains(&"B/hello@v1".to_owned()));
}

/// A slug may start with `-` (even be `-x`): every command that takes a tool or bundle
/// reference takes it after `--`, the usual Unix way, and an option's value with `=`; without
/// them, the usage error says how (clap's tip for arguments, toolctl's for option values).
#[test]
fn references_that_start_with_a_dash_work_after_double_dash() {
    let env = TestEnv::new();
    env.run(&["bundle", "put", "--slug=-b"]).success();
    let file = env.input(&tool_doc("-x", "v1"));
    env.run(&["tool", "put", "--bundle=-b", &file]).success();

    for args in [
        ["tool", "get", "--", "-x"].as_slice(),
        &["tool", "get", "--", "-b/-x@v1"],
        &["tool", "disable", "--", "-x"],
        &["tool", "enable", "--", "-b/-x"],
        &["bundle", "get", "--", "-b"],
        &["bundle", "disable", "--", "-b"],
        &["bundle", "enable", "--", "-b"],
        &["tool", "list", "--bundle=-b"],
        &["invoke", "--args", "{}", "--", "-x"],
    ] {
        let mut with_json = vec!["--json"];
        with_json.extend_from_slice(args);
        env.run(&with_json).success();
    }
    assert_eq!(env.refs(&["--bundle=-b"]), ["-b/-x@v1"]);

    let run = env.run(&["tool", "get", "-x"]);
    run.failure(2)
        .stderr_has("unexpected argument '-x' found")
        .stderr_has("tip: to pass '-x' as a value, use '-- -x'");
    let run = env.run(&["tool", "list", "--bundle", "-b"]);
    run.failure(2)
        .stderr_has("tip: to pass '-b' as the value of '--bundle', use '--bundle=-b'");
    // -q is a flag of toolctl: clap says the option has no value.
    env.run(&["tool", "list", "--bundle", "-q"])
        .failure(2)
        .stderr_has("tip: to pass '-q' as the value of '--bundle', use '--bundle=-q'");
    let error = env.json_error(&["bundle", "put", "--slug", "-c"], 2).error;
    assert_eq!(error.code, "VALIDATION_ERROR");
    assert_eq!(
        error.hint.as_deref(),
        Some("to pass '-c' as the value of '--slug', use '--slug=-c'")
    );
    // A value that is toolctl's flag and no option before it: no tip of ours.
    let run = env.run(&["tool", "list", "--nope"]);
    run.failure(2);
    assert!(!run.stderr.contains("as the value of"), "{run}");

    env.run(&["tool", "delete", "--", "-b/-x"]).success();
    env.run(&["bundle", "delete", "--", "-b"]).success();
    env.run(&["bundle", "restore", "--", "-b"]).success();
}
