//! Trust in what the catalog holds: an explicit catalog must exist, what is stored
//! was checked, files are read only when they are safe to read, reads leave git clean, and a
//! killed write leaves nothing a reader trips on.

use crate::common::{
    Run, TestEnv, find_files, mkfifo, read_json, tool_doc, tool_doc_with, write_file,
};
use serde_json::{Value, json};
use std::path::Path;

/// `toolctl ARGS` in `env`, with `--catalog DIR`.
fn run_on(env: &TestEnv, catalog: &Path, args: &[&str]) -> Run {
    let mut cmd = env.bare_command();
    cmd.arg("--catalog").arg(catalog).args(args);
    Run::of(cmd, None)
}

// --- 5: an explicit catalog that is not there --------------------------------------------------

#[test]
fn explicit_catalog_that_does_not_exist_is_catalog_not_found() {
    let env = TestEnv::uninit();
    let missing = env.root().join("does-not-exist");
    let empty = env.root().join("no-config");
    std::fs::create_dir_all(empty.join("bundles")).unwrap();
    for dir in [&missing, &empty] {
        for args in [
            &["validate"][..],
            &["tool", "list"],
            &["search", "weather"],
            &["bundle", "put", "--slug", "b"],
            &["index", "status"],
            &["export", "--provider", "openai"],
        ] {
            let mut all = vec!["--json"];
            all.extend_from_slice(args);
            let run = run_on(&env, dir, &all);
            run.failure(4);
            let doc = run.json();
            assert_eq!(doc["error"]["code"], "CATALOG_NOT_FOUND", "{run}");
            assert_eq!(
                doc["error"]["details"]["path"],
                dir.to_str().unwrap(),
                "{run}"
            );
        }
        // The human message names the path; nothing was created.
        let run = run_on(&env, dir, &["validate"]);
        run.failure(4).stderr_has(dir.to_str().unwrap());
        assert!(!dir.join("toolctl.json").exists());
    }
    assert!(!missing.exists());

    // The variable is explicit too.
    let mut cmd = env.bare_command();
    cmd.env("TOOLCTL_CATALOG", &missing).arg("validate");
    Run::of(cmd, None)
        .failure(4)
        .stderr_has(missing.to_str().unwrap());

    // init is the exception: it makes the catalog, then every command works.
    run_on(&env, &missing, &["init"]).success();
    run_on(&env, &missing, &["validate"]).success();
}

#[test]
fn a_toolctl_json_that_is_no_regular_file_is_named_not_taken_for_no_catalog() {
    let env = TestEnv::new();
    let config = env.catalog().join("toolctl.json");
    std::fs::remove_file(&config).unwrap();
    mkfifo(&config);
    // Named explicitly, and found from a folder inside the catalog.
    let explicit = run_on(&env, env.catalog(), &["--json", "tool", "list"]);
    let mut cmd = env.bare_command();
    cmd.current_dir(env.catalog().join("bundles"))
        .args(["--json", "tool", "list"]);
    let found = Run::of(cmd, None);
    for run in [explicit, found] {
        run.failure(3);
        let message = run.json()["error"]["message"].as_str().unwrap().to_owned();
        assert!(message.contains("toolctl.json"), "{run}");
        assert!(message.contains("not a regular file (a FIFO)"), "{run}");
    }
}

#[test]
fn a_bundle_json_that_cannot_be_read_is_named_when_its_bundle_is_not_found() {
    let env = TestEnv::new();
    let id = env.bundle("ops");
    let file = env.bundle_dir(&id).join("bundle.json");
    std::fs::remove_file(&file).unwrap();
    mkfifo(&file);
    for args in [
        &["bundle", "get", "ops"][..],
        &["tool", "list", "--bundle", "ops"],
    ] {
        let doc = env.json_error(args, 4);
        assert_eq!(doc.error.code, "NOT_FOUND", "{args:?}");
        let hint = doc.error.hint.unwrap_or_default();
        let inside = format!("bundles/{id}/bundle.json");
        assert!(hint.contains(&inside), "{args:?}: {hint}");
        assert!(
            hint.contains("not a regular file (a FIFO)"),
            "{args:?}: {hint}"
        );
    }
}

/// A state database whose name is a symlink to a file of the catalog (`bundles/NOTES`) is not
/// written through: the link is removed and the database made anew; the file is untouched.
#[test]
fn a_state_database_that_is_a_link_into_the_catalog_is_not_written_through() {
    let env = TestEnv::new();
    env.bundle("b");
    env.put_tool("b", &tool_doc("t", "v1"));
    let notes = env.catalog().join("bundles/NOTES");
    write_file(&notes, "");
    let state = env.catalog().join(".toolctl");
    for name in ["index.sqlite", "usage.sqlite"] {
        let path = state.join(name);
        let _ = std::fs::remove_file(&path);
        std::os::unix::fs::symlink("../bundles/NOTES", &path).unwrap();
    }
    std::fs::remove_file(state.join("index.sqlite.stamp")).ok();
    env.run(&["search", "time"]).success();
    env.run(&["invoke", "b/t@v1"]).success();
    assert_eq!(
        std::fs::read_to_string(&notes).unwrap(),
        "",
        "NOTES is untouched"
    );
    for name in ["index.sqlite", "usage.sqlite"] {
        let meta = std::fs::symlink_metadata(state.join(name)).unwrap();
        assert!(meta.is_file(), "{name} is a file of its own now");
    }
}

/// On a full disk a command that changes nothing still reads: its index is built in memory,
/// with a warning; a command that must write says the disk is full, not that the index is
/// damaged. The catalog lives on a 4 MiB tmpfs mounted in a mount namespace of its own
/// (`unshare -rm`: no privilege needed), filled up after its index was made.
#[test]
fn a_full_disk_blocks_no_read() {
    let env = TestEnv::new();
    let out = env.root().join("out");
    std::fs::create_dir_all(&out).unwrap();
    let disk = env.root().join("disk");
    std::fs::create_dir_all(&disk).unwrap();
    let bin = crate::common::bin().display().to_string();
    let script = format!(
        r#"set -e
mount -t tmpfs -o size=4M tmpfs {disk}
cp -r {catalog} {disk}/cat
{bin} --catalog {disk}/cat tool list > /dev/null
cp {disk}/cat/.toolctl/index.sqlite {out}/index.before
dd if=/dev/zero of={disk}/fill bs=64k 2> /dev/null || true
dd if=/dev/zero of={disk}/fill2 bs=4k 2> /dev/null || true
run() {{ name=$1; shift; set +e; "$@" > {out}/$name.out 2> {out}/$name.err; echo $? > {out}/$name.code; set -e; }}
run list {bin} --catalog {disk}/cat --json tool list
run search {bin} --catalog {disk}/cat --json search current time
run put {bin} --catalog {disk}/cat --json bundle put --slug more
# The index on disk is kept as it was: good again once there is room.
set +e
cmp {disk}/cat/.toolctl/index.sqlite {out}/index.before > /dev/null 2>&1; echo $? > {out}/index.cmp
"#,
        disk = disk.display(),
        catalog = env.catalog().display(),
        out = out.display(),
    );
    let base = env.bare_command();
    let status = std::process::Command::new("unshare")
        .args(["-rm", "sh", "-c", &script])
        .env_clear()
        .envs(
            base.get_envs()
                .filter_map(|(k, v)| Some((k.to_owned(), v?.to_owned()))),
        )
        .status()
        .unwrap();
    assert!(status.success(), "the script ran");
    let read = |name: &str, what: &str| {
        std::fs::read_to_string(out.join(format!("{name}.{what}"))).unwrap()
    };
    for name in ["list", "search"] {
        assert_eq!(
            read(name, "code").trim(),
            "0",
            "{name}: {}",
            read(name, "err")
        );
        assert!(
            read(name, "err").contains("no space is left on the disk"),
            "{name}: {}",
            read(name, "err")
        );
    }
    assert!(read("list", "out").contains("builtin/now@v1"));
    assert_eq!(
        read("index", "cmp").trim(),
        "0",
        "the index file is untouched"
    );
    assert!(read("search", "out").contains("builtin/now@v1"));
    // A write fails, saying why, with nothing half-written.
    assert_ne!(
        read("put", "code").trim(),
        "0",
        "{}{}",
        read("put", "out"),
        read("put", "err")
    );
    let error: Value = serde_json::from_str(&read("put", "out")).unwrap();
    let text = error.to_string();
    assert!(
        text.contains("No space left") || text.contains("disk is full") || text.contains("full"),
        "{text}"
    );
}

// --- 6: one set of rules, at put and everywhere -----------------------------------------------

/// Tools that break a rule `validate` has, with the pointer the error names.
fn rule_breakers() -> Vec<(Value, &'static str)> {
    vec![
        (
            tool_doc_with(
                "bad-type",
                "v1",
                json!({ "argSchema": { "type": "object", "properties": { "city": { "type": "strnig" } } } }),
            ),
            "/argSchema",
        ),
        (
            tool_doc_with(
                "bad-regex",
                "v1",
                json!({ "argSchema": { "type": "object", "properties": { "city": { "type": "string", "pattern": "([a-z" } } } }),
            ),
            "/argSchema/properties/city/pattern",
        ),
        (
            tool_doc_with(
                "remote-ref",
                "v1",
                json!({ "argSchema": { "type": "object", "properties": { "city": { "$ref": "https://example.com/city.json" } } } }),
            ),
            "/argSchema/properties/city/$ref",
        ),
        (
            json!({
                "slug": "undeclared",
                "version": "v1",
                "type": "http",
                "impl": { "method": "GET", "urlTemplate": "https://api.example.com/x?q=${nope}" },
                "argSchema": { "type": "object", "properties": {} }
            }),
            "/impl/urlTemplate",
        ),
    ]
}

#[test]
fn tool_put_refuses_what_validate_rejects() {
    let env = TestEnv::new();
    env.edit_config(|c| c["allowedHosts"] = json!(["api.example.com"]));
    env.bundle("b");
    for (doc, pointer) in rule_breakers() {
        let run = env.try_put_tool("b", &doc);
        run.failure(3);
        let err = run.json();
        assert_eq!(err["error"]["code"], "VALIDATION_ERROR", "{run}");
        let problems = err["error"]["details"]["problems"].as_array().unwrap();
        assert!(
            problems
                .iter()
                .any(|p| p["pointer"].as_str().unwrap().starts_with(pointer)),
            "no problem at {pointer}\n{run}"
        );
    }
    // Nothing was stored.
    assert_eq!(env.refs(&["--bundle", "b"]), Vec::<String>::new());
}

#[test]
fn a_hand_edited_tool_that_breaks_a_rule_is_listed_unavailable() {
    let env = TestEnv::new();
    env.edit_config(|c| c["allowedHosts"] = json!(["api.example.com"]));
    env.bundle("b");
    for (doc, _) in rule_breakers() {
        env.put_tool_by_hand("b", &doc);
    }
    let list = env.json(&["tool", "list", "--bundle", "b"]);
    let items = list["items"].as_array().unwrap();
    assert_eq!(items.len(), 4, "{list:#}");
    for item in items {
        let status = item["status"].as_str().unwrap();
        assert!(status.starts_with("unavailable"), "{item:#}");
    }
    // And export leaves them out.
    let export = env.json(&["export", "--provider", "openai", "--bundle", "b"]);
    assert_eq!(export, json!([]), "{export:#}");
}

// --- 7: createdAt is toolctl's ------------------------------------------------------------------

#[test]
fn created_at_and_modified_at_from_the_input_are_replaced_on_create() {
    let env = TestEnv::new();
    let id = env.bundle("b");
    let before = jiff::Timestamp::now();
    let doc = tool_doc_with(
        "t",
        "v3",
        json!({ "createdAt": "2001-01-01T00:00:00Z", "modifiedAt": "2001-02-01T00:00:00Z" }),
    );
    env.put_tool("b", &doc);
    let stored = read_json(&env.tool_file(&id, "t", "v3"));
    for field in ["createdAt", "modifiedAt"] {
        let at: jiff::Timestamp = stored[field].as_str().unwrap().parse().unwrap();
        assert!(
            at >= before - jiff::SignedDuration::from_secs(1),
            "{field}: {stored:#}"
        );
    }
    // A new bundle from a file too.
    let file = env.root().join("inputs/bundle.json");
    write_file(
        &file,
        &json!({ "slug": "c", "createdAt": "2001-01-01T00:00:00Z", "modifiedAt": "2001-01-01T00:00:00Z" })
            .to_string(),
    );
    let put = env.json(&["bundle", "put", "--file", file.to_str().unwrap()]);
    let bundle = read_json(
        &env.bundle_dir(put["bundleID"].as_str().unwrap())
            .join("bundle.json"),
    );
    let at: jiff::Timestamp = bundle["createdAt"].as_str().unwrap().parse().unwrap();
    assert!(
        at >= before - jiff::SignedDuration::from_secs(1),
        "{bundle:#}"
    );
}

// --- 9: what is read ----------------------------------------------------------------------------

/// A catalog with one good tool and one `tool.json` of the given kind.
fn catalog_with_bad_tool_file(make: impl FnOnce(&Path)) -> (TestEnv, std::path::PathBuf) {
    let env = TestEnv::new();
    let id = env.bundle("b");
    env.put_tool("b", &tool_doc("good", "v1"));
    env.put_tool("b", &tool_doc("bad", "v1"));
    let file = env.tool_file(&id, "bad", "v1");
    std::fs::remove_file(&file).unwrap();
    make(&file);
    (env, file)
}

fn check_bad_tool_file_is_reported(env: &TestEnv, file: &Path, reason: &str) {
    for args in [
        &["tool", "list"][..],
        &["search", "now"],
        &["export", "--provider", "openai"],
        &["index", "rebuild"],
    ] {
        let run = env.run(args);
        run.success().stderr_has(reason);
    }
    assert_eq!(env.refs(&["--bundle", "b"]), ["b/good@v1"]);
    let run = env.run(&["validate"]);
    run.failure(3)
        .stdout_has(file.file_name().unwrap().to_str().unwrap())
        .stdout_has(reason);
}

#[test]
fn a_tool_json_symlinked_to_dev_zero_is_refused() {
    let (env, file) =
        catalog_with_bad_tool_file(|f| std::os::unix::fs::symlink("/dev/zero", f).unwrap());
    check_bad_tool_file_is_reported(&env, &file, "outside the catalog");
}

/// A bundle folder or a slug folder that is a symlink is read only when it resolves inside
/// the catalog; one that leaves it is a problem every read reports and `validate` fails on.
#[test]
fn symlinked_bundle_and_slug_folders_must_stay_inside_the_catalog() {
    for (folder, inside) in [
        ("bundle", false),
        ("slug", false),
        ("bundle", true),
        ("slug", true),
    ] {
        let env = TestEnv::new();
        let id = env.bundle("b");
        env.put_tool("b", &tool_doc("good", "v1"));
        env.put_tool("b", &tool_doc("bad", "v1"));
        let bundle_dir = env.bundle_dir(&id);
        let real = match folder {
            "bundle" => bundle_dir.clone(),
            _ => bundle_dir.join("tools/bad"),
        };
        let away = if inside {
            env.catalog().join("vendor").join(folder)
        } else {
            env.root().join("outside").join(folder)
        };
        std::fs::create_dir_all(away.parent().unwrap()).unwrap();
        std::fs::rename(&real, &away).unwrap();
        std::os::unix::fs::symlink(&away, &real).unwrap();
        let case = format!("{folder} folder, inside: {inside}");
        if inside {
            let mut refs = env.refs(&["--bundle", "b"]);
            refs.sort();
            assert_eq!(refs, ["b/bad@v1", "b/good@v1"], "{case}");
            continue;
        }
        for args in [
            &["tool", "list"][..],
            &["search", "now"],
            &["index", "rebuild"],
        ] {
            env.run(args).success().stderr_has("outside the catalog");
        }
        let listed = env.refs(&[]);
        assert!(
            !listed.iter().any(|r| r == "b/bad@v1"),
            "{case}: {listed:?}"
        );
        if folder == "slug" {
            assert_eq!(env.refs(&["--bundle", "b"]), ["b/good@v1"], "{case}");
        }
        env.run(&["validate"])
            .failure(3)
            .stdout_has("outside the catalog");
    }
}

#[test]
fn a_tool_json_that_is_a_fifo_does_not_hang() {
    let (env, file) = catalog_with_bad_tool_file(mkfifo);
    check_bad_tool_file_is_reported(&env, &file, "not a regular file");
}

#[test]
fn a_tool_json_over_4_mib_is_refused_and_its_bundle_stays_exportable() {
    let (env, file) = catalog_with_bad_tool_file(|f| {
        let mut doc = tool_doc("bad", "v1");
        doc["description"] = "x".repeat(5 * 1024 * 1024).into();
        std::fs::write(f, serde_json::to_vec(&doc).unwrap()).unwrap();
    });
    check_bad_tool_file_is_reported(&env, &file, "over the limit");
    // tool put never lets such a file in; one placed by hand makes `bundle export` a clear
    // error naming it (exit 3), never an internal one or an archive import would refuse.
    let out = env.root().join("b.zip");
    let run = env.run(&["bundle", "export", "b", "--output", out.to_str().unwrap()]);
    run.failure(3)
        .stderr_has(file.to_str().unwrap())
        .stderr_has("over the limit");
    assert!(!out.exists());
    let mut doc = tool_doc("big", "v1");
    doc["description"] = "x".repeat(5 * 1024 * 1024).into();
    env.try_put_tool("b", &doc)
        .failure(3)
        .stdout_has("over the limit");
}

#[test]
fn tool_put_refuses_a_document_whose_file_would_be_over_4_mib() {
    // Compact, the input is under the 4 MiB input cap; written as toolctl writes (pretty, one
    // array item a line) it would be three times that: a file no command reads back.
    let env = TestEnv::new();
    env.bundle("b");
    let mut doc = tool_doc("wide", "v1");
    doc["x-items"] = json!(vec![0; 1_000_000]);
    let compact = serde_json::to_vec(&doc).unwrap();
    assert!(compact.len() < 4 * 1024 * 1024);
    let file = env.root().join("inputs/wide.json");
    std::fs::write(&file, compact).unwrap();
    let refused = env.json_error(&["tool", "put", "--bundle", "b", file.to_str().unwrap()], 3);
    assert_eq!(refused.error.code, "VALIDATION_ERROR");
    assert!(
        refused
            .error
            .message
            .contains("over the limit of 4194304 bytes"),
        "{}",
        refused.error.message
    );
    assert!(find_files(env.catalog(), "tool.json").is_empty());
    env.run(&["validate"]).success();
}

/// `validate FILE` of a loose tool keeps `tool put`'s size rule, measured the same way (the
/// file as toolctl would write it), so it never passes what put refuses.
#[test]
fn validate_file_and_tool_put_agree_on_size() {
    let env = TestEnv::new();
    env.bundle("b");
    for (items, over) in [(1_000_000, true), (100_000, false)] {
        let mut doc = tool_doc_with("wide", "v1", json!({ "description": "Many items." }));
        doc["x-items"] = json!(vec![0; items]);
        let file = env.root().join(format!("inputs/wide-{items}.json"));
        std::fs::write(&file, serde_json::to_vec(&doc).unwrap()).unwrap();
        let file = file.to_str().unwrap();
        let checked = env.run(&["--json", "validate", file]);
        let put = env.run(&["--json", "tool", "put", "--bundle", "b", file]);
        if !over {
            checked.success();
            put.success();
            continue;
        }
        checked.failure(3);
        put.failure(3);
        let finding = checked.json()["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["rule"] == "size")
            .cloned()
            .unwrap_or_else(|| panic!("no size finding: {}", checked.stdout));
        let put_problem = &put.json()["error"]["details"]["problems"][0]["message"];
        assert_eq!(finding["message"], *put_problem);
        assert!(
            put_problem
                .as_str()
                .unwrap()
                .contains("over the limit of 4194304 bytes"),
            "{put_problem}"
        );
    }
}

#[test]
fn bundle_put_refuses_a_document_whose_file_would_be_over_4_mib() {
    // As tool put: under the input cap compact, over the read limit as toolctl writes it. A
    // new bundle and a replaced one alike: nothing is written.
    let env = TestEnv::new();
    let id = env.bundle("kept");
    let before = std::fs::read(env.bundle_dir(&id).join("bundle.json")).unwrap();
    for (name, doc) in [
        ("new", json!({ "slug": "wide" })),
        ("replaced", json!({ "slug": "kept", "bundleID": id })),
    ] {
        let mut doc = doc;
        doc["x-items"] = json!(vec![0; 1_000_000]);
        let compact = serde_json::to_vec(&doc).unwrap();
        assert!(compact.len() < 4 * 1024 * 1024);
        let file = env.root().join(format!("inputs/{name}.json"));
        std::fs::write(&file, compact).unwrap();
        let refused = env.json_error(&["bundle", "put", "--file", file.to_str().unwrap()], 3);
        assert_eq!(refused.error.code, "VALIDATION_ERROR");
        assert!(
            refused
                .error
                .message
                .contains("over the limit of 4194304 bytes"),
            "{name}: {}",
            refused.error.message
        );
    }
    assert_eq!(find_files(env.catalog(), "bundle.json").len(), 1);
    assert_eq!(
        std::fs::read(env.bundle_dir(&id).join("bundle.json")).unwrap(),
        before
    );
    env.run(&["bundle", "get", "wide"]).failure(4);
}

#[test]
fn input_files_are_capped_and_must_be_regular() {
    let env = TestEnv::new();
    env.bundle("b");
    let fifo = env.root().join("inputs/fifo");
    mkfifo(&fifo);
    let big = env.root().join("inputs/big.json");
    let mut doc = tool_doc("big", "v1");
    doc["description"] = "x".repeat(5 * 1024 * 1024).into();
    std::fs::write(&big, serde_json::to_vec(&doc).unwrap()).unwrap();
    for file in [&fifo, &big, Path::new("/dev/zero")] {
        let f = file.to_str().unwrap();
        for args in [
            &["tool", "put", "--bundle", "b", f][..],
            &["bundle", "put", "--file", f],
            &["invoke", "builtin/now", "--args-file", f],
            &["invoke", "--batch", f],
            &["validate", f],
        ] {
            let mut all = vec!["--json"];
            all.extend_from_slice(args);
            let run = env.run(&all);
            assert_eq!(run.code(), 3, "{run}");
            assert!(run.stdout.contains(f), "the error names the file\n{run}");
        }
    }
}

type MakeAt = Box<dyn Fn(&Path)>;

/// `make` puts something that is not a readable file at `path`: a FIFO, a link to `/dev/zero`,
/// a sparse file past the size cap, or a link to a good file outside the catalog (`outside`).
fn unreadable_kinds(outside: &Path) -> Vec<(&'static str, MakeAt)> {
    let outside = outside.to_owned();
    vec![
        ("not a regular file", Box::new(mkfifo)),
        (
            "outside the catalog",
            Box::new(|path: &Path| std::os::unix::fs::symlink("/dev/zero", path).unwrap()),
        ),
        (
            "over the limit",
            Box::new(|path: &Path| {
                let file = std::fs::File::create(path).unwrap();
                file.set_len(2 * 1024 * 1024 * 1024).unwrap();
            }),
        ),
        (
            "outside the catalog",
            Box::new(move |path: &Path| std::os::unix::fs::symlink(&outside, path).unwrap()),
        ),
    ]
}

#[test]
fn an_agent_file_that_is_no_regular_file_inside_the_catalog_is_refused_not_read() {
    let env = TestEnv::new();
    let agent = "agent-3f2b8c1e-9d4a-4e6b-8a7c-000000000001";
    let good = json!({
        "schemaVersion": "1",
        "agentID": agent,
        "createdAt": "2025-01-01T00:00:00Z",
        "modifiedAt": "2025-01-01T00:00:00Z",
        "tools": [],
    });
    let outside = env.root().join("elsewhere.json");
    write_file(&outside, &good.to_string());
    let path = env.catalog().join("agents").join(format!("{agent}.json"));
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    for (why, make) in unreadable_kinds(&outside) {
        let _ = std::fs::remove_file(&path);
        make(&path);
        for args in [
            &["agent", "show", agent][..],
            &["attach", agent, "--query", "time"],
            &["agent", "detach", agent, "builtin/now"],
        ] {
            let mut all = vec!["--json"];
            all.extend_from_slice(args);
            let run = env.run(&all);
            assert_eq!(run.code(), 3, "{why}: {run}");
            let text = format!("{}{}", run.stdout, run.stderr);
            assert!(text.contains(why), "{why}: {run}");
            assert!(
                text.contains(&format!("{agent}.json")),
                "names the file: {run}"
            );
        }
        // The list names it as a problem and goes on.
        let run = env.run(&["--json", "agent", "list"]);
        let text = format!("{}{}", run.stdout, run.stderr);
        assert!(text.contains(why), "{why}: {run}");
    }
    // Nothing was written through the link.
    assert_eq!(read_json(&outside), good);
}

#[test]
fn a_schema_file_that_is_no_regular_file_is_replaced_unread() {
    let env = TestEnv::new();
    env.bundle("b");
    let outside = env.root().join("elsewhere.json");
    write_file(&outside, "{}");
    let schema = env.catalog().join("schemas/tool.schema.json");
    let expected = env.run(&["schema", "tool"]).success().stdout.clone();
    for (n, (why, make)) in unreadable_kinds(&outside).into_iter().enumerate() {
        std::fs::create_dir_all(schema.parent().unwrap()).unwrap();
        let _ = std::fs::remove_file(&schema);
        make(&schema);
        env.run(&["tool", "new", "b", &format!("t{n}"), "--type", "native"])
            .success();
        let kept = std::fs::symlink_metadata(&schema).unwrap();
        assert!(kept.is_file(), "{why}: the schema is a file again");
        assert_eq!(
            serde_json::from_str::<Value>(&std::fs::read_to_string(&schema).unwrap()).unwrap(),
            serde_json::from_str::<Value>(&expected).unwrap(),
            "{why}"
        );
    }
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "{}");
}

// --- 12: reads keep git clean --------------------------------------------------------------------

#[test]
fn a_read_in_a_clone_without_state_leaves_git_status_clean() {
    let env = TestEnv::new();
    env.bundle("b");
    env.put_tool("b", &tool_doc("t", "v1"));
    std::fs::remove_dir_all(env.catalog().join(".toolctl")).unwrap();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .current_dir(env.catalog())
            .env("HOME", env.home())
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["commit", "-qm", "catalog"]);
    for args in [
        &["tool", "list"][..],
        &["search", "time"],
        &["index", "status"],
        &["pick", "time", "--scorer", "keyword"],
        &["invoke", "b/t"],
    ] {
        env.run(args).success();
        assert_eq!(git(&["status", "--porcelain"]), "", "after {args:?}");
    }
    assert!(env.catalog().join(".toolctl/.gitignore").is_file());
}

// --- 13: an interrupted bundle put ---------------------------------------------------------------

#[test]
fn an_empty_bundle_folder_left_by_a_killed_put_is_absent_everywhere() {
    let env = TestEnv::new();
    env.bundle("b");
    let leftover = env
        .catalog()
        .join("bundles/0190a5c0-0000-7000-8000-000000000001");
    std::fs::create_dir_all(&leftover).unwrap();
    let with_temp = env
        .catalog()
        .join("bundles/0190a5c0-0000-7000-8000-000000000002");
    write_file(&with_temp.join(".toolctl-tmp-abc"), "{\"slug\":");
    let run = env.run(&["validate"]);
    run.success();
    assert!(!run.stderr.contains("bundle.json"), "{run}");
    let list = env.run(&["bundle", "list"]);
    list.success();
    assert_eq!(list.stderr, "", "{list}");
    let run = env.run(&["tool", "list"]);
    run.success();
    assert_eq!(run.stderr, "", "{run}");
}

#[test]
fn bundle_put_never_shows_a_bundle_folder_without_its_file() {
    // The new folder appears by rename: no moment shows bundles/<id>/ without bundle.json. A
    // reader polling the folder while bundles are created never sees one.
    let env = TestEnv::new();
    let bundles = env.catalog().join("bundles");
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watcher = {
        let done = done.clone();
        let bundles = bundles.clone();
        std::thread::spawn(move || {
            let mut bad = Vec::new();
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                for entry in std::fs::read_dir(&bundles).unwrap().flatten() {
                    let name = entry.file_name().to_string_lossy().into_owned();
                    if !name.starts_with('.') && !entry.path().join("bundle.json").exists() {
                        // Re-check: the rename may have landed just now.
                        if !entry.path().join("bundle.json").exists() {
                            bad.push(name);
                        }
                    }
                }
            }
            bad
        })
    };
    for n in 0..20 {
        env.bundle(&format!("b{n}"));
    }
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let bad = watcher.join().unwrap();
    assert_eq!(bad, Vec::<String>::new());
}

// --- 16: codes that agree -------------------------------------------------------------------------

#[test]
fn a_tool_json_that_is_not_utf8_is_a_validation_error() {
    let env = TestEnv::new();
    env.bundle("b");
    let file = env.root().join("inputs/latin1.json");
    let mut bytes = serde_json::to_vec(&tool_doc("t", "v1")).unwrap();
    // "caf\xe9" in the description: Latin-1, not UTF-8.
    bytes.splice(1..1, b"\"description\":\"caf\xe9\",".iter().copied());
    std::fs::write(&file, &bytes).unwrap();
    let run = env.run(&[
        "--json",
        "tool",
        "put",
        "--bundle",
        "b",
        file.to_str().unwrap(),
    ]);
    run.failure(3);
    assert_eq!(run.json()["error"]["code"], "VALIDATION_ERROR", "{run}");
    run.stdout_has("UTF-8");
}

#[test]
fn missing_input_files_are_not_found_alike() {
    let env = TestEnv::new();
    env.bundle("b");
    let missing = env.root().join("inputs/missing.json");
    let m = missing.to_str().unwrap();
    for args in [
        &["invoke", "builtin/now", "--args-file", m][..],
        &["invoke", "--batch", m],
        &["bundle", "import", m],
        &["tool", "put", "--bundle", "b", m],
        &["bundle", "put", "--file", m],
        &["validate", m],
    ] {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        let run = env.run(&all);
        run.failure(4);
        assert_eq!(run.json()["error"]["code"], "NOT_FOUND", "{run}");
        run.stdout_has(m);
    }
}

#[test]
fn a_forged_search_page_token_is_refused() {
    use base64::Engine;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let env = TestEnv::new();
    env.bundle("b");
    for n in 0..3 {
        env.put_tool(
            "b",
            &tool_doc_with(
                &format!("clock{n}"),
                "v1",
                json!({ "description": "Tell the time" }),
            ),
        );
    }
    let first = env.json(&["search", "time", "--page-size", "1"]);
    let token = first["nextPageToken"].as_str().unwrap();
    let mut inner: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(token).unwrap()).unwrap();
    for forged in [json!(["abc"]), json!([]), json!(["1", "2"])] {
        inner["after"] = forged;
        let token = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&inner).unwrap());
        let err = env.json_error(
            &["search", "time", "--page-size", "1", "--page-token", &token],
            3,
        );
        assert_eq!(err.error.code, "VALIDATION_ERROR");
    }
}
// --- 10: a corrupt index ---------------------------------------------------------------------------

/// What the three reads answer, compared as text.
fn index_answers(env: &TestEnv) -> Result<(Vec<String>, Vec<String>, u64), String> {
    let list = env.run(&["--json", "tool", "list", "--page-size", "1000"]);
    let search = env.run(&["--json", "search", "gauge", "--page-size", "1000"]);
    let status = env.run(&["--json", "index", "status"]);
    for run in [&list, &search, &status] {
        if run.code() != 0 {
            return Err(format!("{run}"));
        }
    }
    let refs = |doc: Value| -> Vec<String> {
        let mut refs: Vec<String> = doc["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["ref"].as_str().unwrap().to_owned())
            .collect();
        refs.sort();
        refs
    };
    Ok((
        refs(list.json()),
        refs(search.json()),
        status.json()["tools"].as_u64().unwrap(),
    ))
}

#[test]
fn a_corrupt_index_never_gives_a_wrong_answer() {
    let env = TestEnv::new();
    let id = env.bundle("g");
    // 120 tools written as files (the files are the truth), then indexed.
    for n in 0..120 {
        let mut doc = tool_doc_with(
            &format!("gauge-{n:03}"),
            "v1",
            json!({ "description": format!("Read gauge number {n} of the plant") }),
        );
        doc["toolID"] = uuid::Uuid::now_v7().to_string().into();
        doc["bundleID"] = id.clone().into();
        doc["createdAt"] = "2025-01-01T00:00:00Z".into();
        doc["modifiedAt"] = "2025-01-01T00:00:00Z".into();
        write_file(
            &env.tool_file(&id, &format!("gauge-{n:03}"), "v1"),
            &serde_json::to_string_pretty(&doc).unwrap(),
        );
    }
    env.run(&["index", "rebuild"]).success();
    let right = index_answers(&env).unwrap();
    assert_eq!(right.1.len(), 120);
    let state = env.catalog().join(".toolctl");
    let index = state.join("index.sqlite");
    for side in ["index.sqlite-wal", "index.sqlite-shm"] {
        let _ = std::fs::remove_file(state.join(side));
    }
    let pristine = std::fs::read(&index).unwrap();
    let (mut failed, mut silent) = (Vec::new(), Vec::new());
    for seed in 0..40u64 {
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut bytes = pristine.clone();
        // A few bytes anywhere past the 100-byte header (a damaged header is "not a database",
        // which was always rebuilt).
        for _ in 0..8 {
            let at = rng.usize(100..bytes.len());
            bytes[at] ^= rng.u8(1..);
        }
        for side in ["index.sqlite-wal", "index.sqlite-shm"] {
            let _ = std::fs::remove_file(state.join(side));
        }
        std::fs::write(&index, &bytes).unwrap();
        match index_answers(&env) {
            Ok(answers) if answers == right => {}
            // SQLite keeps no checksums: a flipped byte inside a row's value or an index
            // entry reads as another valid value. The index's stamp (src/index/verify.rs) sees
            // that the file changed behind toolctl's back, and `PRAGMA integrity_check` then
            // finds the damage.
            Ok(answers) => silent.push(format!(
                "seed {seed}: {} listed, {} found, status {} (right: {}, {}, {})",
                answers.0.len(),
                answers.1.len(),
                answers.2,
                right.0.len(),
                right.1.len(),
                right.2
            )),
            Err(run) => failed.push(format!("seed {seed}: failed\n{run}")),
        }
    }
    assert!(
        silent.is_empty(),
        "{} of 40 seeds answered wrongly without an error:\n{}",
        silent.len(),
        silent.join("\n")
    );
    // Never an error a user must repair by hand: a damaged index is detected and rebuilt.
    assert!(
        failed.is_empty(),
        "{} of 40 seeds:\n{}",
        failed.len(),
        failed.join("\n")
    );
}

// --- 11: a read-only catalog ----------------------------------------------------------------------

/// `chattr -R +i` on a tree for the life of the guard: even root cannot write there, as in a
/// read-only mount or another user's 0555 tree (the tests run as root, whom mode bits do not
/// stop).
struct Immutable(std::path::PathBuf);

impl Immutable {
    fn new(dir: &Path) -> Self {
        let status = std::process::Command::new("chattr")
            .args(["-R", "+i"])
            .arg(dir)
            .status()
            .unwrap();
        assert!(status.success(), "chattr +i is needed for this test");
        Self(dir.to_owned())
    }
}

impl Drop for Immutable {
    fn drop(&mut self) {
        let _ = std::process::Command::new("chattr")
            .args(["-R", "-i"])
            .arg(&self.0)
            .status();
    }
}

/// A catalog with bundle `b` holding `clock`, "Tell the time in a city".
fn clock_catalog() -> TestEnv {
    let env = TestEnv::new();
    env.bundle("b");
    env.put_tool(
        "b",
        &tool_doc_with(
            "clock",
            "v1",
            json!({ "description": "Tell the time in a city" }),
        ),
    );
    env
}

/// A read-only catalog with and without `.toolctl/`, read with the cache folder usable
/// (`~/.cache`, `$XDG_CACHE_HOME`) or not: the index is then kept in
/// `<cache>/toolctl/<hash>/index.sqlite`, else built in memory, and each command says which once.
#[test]
fn a_read_only_catalog_is_read_from_an_index_in_the_cache_folder_else_in_memory() {
    for (with_state, cache) in [
        (true, "home"),
        (false, "home"),
        (false, "xdg"),
        (true, "unusable"),
    ] {
        let env = clock_catalog();
        env.run(&["search", "city"]).success();
        if !with_state {
            std::fs::remove_dir_all(env.catalog().join(".toolctl")).unwrap();
        }
        let xdg_cache = env.root().join("xdg-cache");
        // A cache folder that cannot be made: XDG_CACHE_HOME inside the frozen catalog.
        let unusable = env.catalog().join("no-cache");
        let _frozen = Immutable::new(env.catalog());
        assert!(
            std::fs::write(env.catalog().join("probe"), "x").is_err(),
            "the catalog must not be writable"
        );
        let run = |args: &[&str]| {
            let mut command = env.command(args);
            match cache {
                "xdg" => command.env("XDG_CACHE_HOME", &xdg_cache),
                "unusable" => command.env("XDG_CACHE_HOME", &unusable),
                _ => &mut command,
            };
            Run::of(command, None)
        };
        let expected = match cache {
            "home" => "its search index is kept in",
            "xdg" => "its search index is kept in",
            _ => "built in memory",
        };
        for args in [
            &["search", "city"][..],
            &["tool", "list"],
            &["export", "--provider", "openai"],
            &["pick", "time", "--scorer", "keyword"],
            &["index", "status"],
        ] {
            let run = run(args);
            run.success();
            assert_eq!(
                run.stderr.matches("cannot be written").count(),
                1,
                "said once ({args:?}, .toolctl: {with_state}, cache: {cache})\n{run}"
            );
            assert!(run.stderr.contains(expected), "{cache}: {run}");
            assert!(!run.stderr.contains("readonly database"), "{run}");
        }
        let list: Value = run(&["--json", "tool", "list", "--bundle", "b"]).json();
        assert_eq!(list["items"][0]["ref"], "b/clock@v1");
        let found: Value = run(&["--json", "search", "city"]).json();
        assert_eq!(found["items"][0]["ref"], "b/clock@v1", "{found:#}");
        let cached = match cache {
            "home" => find_files(&env.home().join(".cache/toolctl"), "index.sqlite"),
            "xdg" => find_files(&xdg_cache.join("toolctl"), "index.sqlite"),
            _ => Vec::new(),
        };
        if cache == "unusable" {
            assert!(!unusable.exists());
        } else {
            assert_eq!(cached.len(), 1, "{cache}: {cached:?}");
            let status: Value = run(&["--json", "index", "status"]).json();
            assert_eq!(status["path"], json!(cached[0]), "{status:#}");
            // `index rebuild` rebuilds the cached index.
            std::fs::write(&cached[0], b"not a database").unwrap();
            run(&["index", "rebuild"]).success();
            let status: Value = run(&["--json", "index", "status"]).json();
            assert_eq!(status["lastSync"]["rebuilt"], false, "{status:#}");
            assert!(status["tools"].as_u64().unwrap() >= 1, "{status:#}");
        }
    }
}

/// A file where the state folder `.toolctl` goes (a checkout, a stray `touch`): readers still
/// answer, from an index in the cache folder, and say why; a write names the file.
#[test]
fn a_file_where_the_state_folder_goes_is_read_around_and_named() {
    let env = clock_catalog();
    let state = env.catalog().join(".toolctl");
    std::fs::remove_dir_all(&state).unwrap();
    std::fs::write(&state, "not a folder").unwrap();
    for args in [
        &["search", "tell the time in a city"][..],
        &["tool", "list"],
        &["pick", "time in a city"],
    ] {
        let run = env.run(args);
        run.success().stdout_has("clock");
        assert!(
            run.stderr.contains(".toolctl is not a folder"),
            "{args:?}: {run}"
        );
    }
    let found: Value = env.json(&["search", "city"]);
    assert_eq!(found["items"][0]["ref"], "b/clock@v1", "{found:#}");
    assert_eq!(
        find_files(&env.home().join(".cache/toolctl"), "index.sqlite").len(),
        1
    );
    // The file is left as it was.
    assert_eq!(std::fs::read_to_string(&state).unwrap(), "not a folder");
    // A write cannot keep its lock there: it fails naming the path, and writes nothing.
    let doc = tool_doc_with("alarm", "v1", json!({ "description": "Ring at a time" }));
    let put = env.run_stdin(&["tool", "put", "-", "--bundle", "b"], &doc.to_string());
    assert_ne!(put.code(), 0, "{put}");
    assert!(put.stderr.contains(".toolctl"), "{put}");
    assert!(
        !env.catalog().join("bundles/b/tools/alarm").exists(),
        "{put}"
    );
}

/// Regression: a `pattern` over the regex size limit was refused with a ~50 KB message that
/// echoed the whole pattern and called it "not a regex".
#[test]
fn a_pattern_over_the_regex_size_limit_is_said_too_large_in_a_short_message() {
    let env = TestEnv::new();
    env.edit_config(|c| c["allowedHosts"] = json!(["api.example.com"]));
    env.bundle("b");
    let pattern = "(?:a{1000}){1000}".repeat(3000);
    let doc = tool_doc_with(
        "huge-regex",
        "v1",
        json!({ "argSchema": { "type": "object", "properties": { "city": { "type": "string", "pattern": pattern } } } }),
    );
    let run = env.try_put_tool("b", &doc);
    run.failure(3);
    let err = run.json();
    let problems = err["error"]["details"]["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 1, "{run}");
    assert_eq!(
        problems[0]["pointer"], "/argSchema/properties/city/pattern",
        "{run}"
    );
    let message = problems[0]["message"].as_str().unwrap();
    assert_eq!(
        message,
        format!(
            "not a usable JSON Schema: the regular expression \"{}…\" (51000 characters) is too \
             large: compiled, it exceeds the regex size limit of 10485760 bytes; simplify it \
             (fewer or smaller counted repetitions such as {{1000}})",
            &pattern[..80]
        )
    );
    assert!(run.stdout.len() + run.stderr.len() < 2_000, "{run}");
}
