//! `toolctl init` and how toolctl finds its catalog: `--catalog`, then
//! `$TOOLCTL_CATALOG`, then the nearest ancestor holding `toolctl.json`, then
//! `$XDG_DATA_HOME/toolctl` (or `~/.local/share/toolctl`), created on the first write. A catalog
//! named explicitly must exist (`CATALOG_NOT_FOUND`), except for `init`.

use crate::common::{Run, TestEnv, read_json};
use std::path::Path;

#[test]
fn init_writes_config_gitignore_and_bundles_folder() {
    let env = TestEnv::uninit();
    let dir = env.root().join("fresh");
    let mut cmd = env.bare_command();
    cmd.args(["init", dir.to_str().unwrap()]);
    let run = Run::of(cmd, None);
    run.success();
    assert_eq!(run.stdout, "");
    assert_eq!(
        env.normalize(&run.stderr),
        "Initialised a toolctl catalog in [TMP]/fresh\n"
    );

    let config = read_json(&dir.join("toolctl.json"));
    assert_eq!(config["allowedHosts"], serde_json::json!([]));
    assert_eq!(config["builtin"]["tools"]["exec"]["isEnabled"], false);
    assert_eq!(config["reap"]["gracePeriod"], "48h");
    let ignore = std::fs::read_to_string(dir.join(".toolctl/.gitignore")).unwrap();
    assert!(
        ignore.lines().any(|l| l.trim() == "*"),
        ".gitignore must ignore everything in .toolctl/: {ignore:?}"
    );
    assert!(dir.join("bundles").is_dir());
}

/// Regression: `init` wrote `toolctl.json` and then failed on a file where `.toolctl` goes,
/// leaving a half-made catalog behind. A failed init now leaves the folder as it was.
#[test]
fn a_failed_init_leaves_no_toolctl_json() {
    let env = TestEnv::uninit();
    // A file where a folder goes, and a folder where toolctl.json goes (written last, after
    // `.toolctl/.gitignore`, which must not stay either).
    for (name, blocker) in [
        ("i3", ".toolctl"),
        ("i4", "bundles"),
        ("i5", "toolctl.json"),
    ] {
        let dir = env.root().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        if blocker == "toolctl.json" {
            std::fs::create_dir(dir.join(blocker)).unwrap();
        } else {
            std::fs::write(dir.join(blocker), "\n").unwrap();
        }
        for _ in 0..2 {
            let mut cmd = env.bare_command();
            cmd.args(["init", dir.to_str().unwrap()]);
            let run = Run::of(cmd, None);
            run.failure(1);
            assert!(
                run.stderr.contains(&format!("{name}/{blocker}")),
                "{name}: the error names the path: {run}"
            );
            let mut left: Vec<String> = std::fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            left.sort();
            assert_eq!(
                left,
                [blocker],
                "{name}: init left more than was there: {run}"
            );
        }
        // Once the file is out of the way, init makes the catalog.
        if blocker == "toolctl.json" {
            std::fs::remove_dir(dir.join(blocker)).unwrap();
        } else {
            std::fs::remove_file(dir.join(blocker)).unwrap();
        }
        let mut cmd = env.bare_command();
        cmd.args(["init", dir.to_str().unwrap()]);
        Run::of(cmd, None).success();
        assert!(dir.join("toolctl.json").is_file());
    }
}

#[test]
fn init_is_idempotent_and_keeps_edits() {
    let env = TestEnv::new();
    env.edit_config(|c| c["allowedHosts"] = serde_json::json!(["api.example.com"]));
    let config = env.catalog().join("toolctl.json");
    let ignore = env.catalog().join(".toolctl/.gitignore");
    std::fs::write(&ignore, "# mine\n*\n").unwrap();
    let before = std::fs::read(&config).unwrap();

    let run = env.run(&["init"]);
    run.success();
    assert_eq!(run.stdout, "");
    assert_eq!(
        env.normalize(&run.stderr),
        "[TMP]/catalog already is a toolctl catalog; nothing changed\n"
    );
    assert_eq!(std::fs::read(&config).unwrap(), before);
    assert_eq!(std::fs::read_to_string(&ignore).unwrap(), "# mine\n*\n");

    let json = env.json(&["init"]);
    assert_eq!(json["created"], false);
    assert_eq!(json["root"], env.catalog().to_str().unwrap());
}

#[test]
fn init_without_dir_uses_the_working_folder() {
    let env = TestEnv::uninit();
    let mut cmd = env.bare_command();
    cmd.arg("init");
    Run::of(cmd, None).success();
    assert!(env.work().join("toolctl.json").is_file());
    assert!(env.work().join(".toolctl/.gitignore").is_file());
}

/// A bundle whose slug says which catalog a command used.
fn mark(env: &TestEnv, catalog: &Path, slug: &str) {
    let mut cmd = env.bare_command();
    cmd.args(["init", catalog.to_str().unwrap()]);
    Run::of(cmd, None).success();
    let mut cmd = env.bare_command();
    cmd.arg("--catalog")
        .arg(catalog)
        .args(["bundle", "put", "--slug", slug]);
    Run::of(cmd, None).success();
}

/// The non-built-in bundle slugs a command sees.
fn seen(run: &Run) -> Vec<String> {
    run.success();
    run.json()["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["slug"].as_str().unwrap().to_owned())
        .filter(|s| s != "builtin")
        .collect()
}

#[test]
fn catalog_discovery_order() {
    let env = TestEnv::uninit();
    let flag = env.root().join("by-flag");
    let var = env.root().join("by-env");
    let ancestor = env.root().join("project");
    mark(&env, &flag, "from-flag");
    mark(&env, &var, "from-env");
    mark(&env, &ancestor, "from-ancestor");
    let deep = ancestor.join("src/deeper");
    std::fs::create_dir_all(&deep).unwrap();

    // --catalog beats everything.
    let mut cmd = env.bare_command();
    cmd.current_dir(&deep)
        .env("TOOLCTL_CATALOG", &var)
        .arg("--catalog")
        .arg(&flag)
        .args(["--json", "bundle", "list"]);
    assert_eq!(seen(&Run::of(cmd, None)), ["from-flag"]);

    // Then $TOOLCTL_CATALOG.
    let mut cmd = env.bare_command();
    cmd.current_dir(&deep)
        .env("TOOLCTL_CATALOG", &var)
        .args(["--json", "bundle", "list"]);
    assert_eq!(seen(&Run::of(cmd, None)), ["from-env"]);

    // Then the nearest ancestor holding toolctl.json.
    let mut cmd = env.bare_command();
    cmd.current_dir(&deep).args(["--json", "bundle", "list"]);
    assert_eq!(seen(&Run::of(cmd, None)), ["from-ancestor"]);

    // A nearer catalog inside the project wins over the project's.
    let inner = ancestor.join("src");
    mark(&env, &inner, "from-inner");
    let mut cmd = env.bare_command();
    cmd.current_dir(&deep).args(["--json", "bundle", "list"]);
    assert_eq!(seen(&Run::of(cmd, None)), ["from-inner"]);

    // Nothing: the XDG default, empty (only the built-ins).
    let mut cmd = env.bare_command();
    cmd.args(["--json", "bundle", "list"]);
    assert_eq!(seen(&Run::of(cmd, None)), Vec::<String>::new());
}

#[test]
fn xdg_default_is_created_on_first_write_not_on_read() {
    let env = TestEnv::uninit();
    let default = env.xdg_data().join("toolctl");

    let mut cmd = env.bare_command();
    cmd.args(["--json", "tool", "list"]);
    let run = Run::of(cmd, None);
    run.success();
    assert_eq!(run.json()["items"].as_array().unwrap().len(), 3);
    assert!(!default.exists(), "a read must not create the catalog");

    let mut cmd = env.bare_command();
    cmd.args(["bundle", "put", "--slug", "first"]);
    let run = Run::of(cmd, None);
    run.success();
    assert!(
        run.stderr
            .contains(&format!("Created a new catalog in {}", default.display())),
        "{run}"
    );
    assert!(default.join("toolctl.json").is_file());
    assert!(default.join(".toolctl/.gitignore").is_file());

    let mut cmd = env.bare_command();
    cmd.args(["--json", "bundle", "get", "first"]);
    let run = Run::of(cmd, None);
    run.success();
    let path = run.json()["path"].as_str().unwrap().to_owned();
    assert!(path.starts_with(default.to_str().unwrap()), "{path}");
}

#[test]
fn home_default_when_xdg_data_home_is_unset() {
    let env = TestEnv::uninit();
    let mut cmd = env.bare_command();
    cmd.env_remove("XDG_DATA_HOME")
        .args(["bundle", "put", "--slug", "first"]);
    Run::of(cmd, None).success();
    assert!(
        env.home()
            .join(".local/share/toolctl/toolctl.json")
            .is_file()
    );
    assert!(!env.xdg_data().exists());
}

#[test]
fn toolctl_catalog_variable_must_name_an_existing_catalog() {
    // An explicit catalog is never created by a write (a mistyped path would silently start
    // an empty catalog): `CATALOG_NOT_FOUND` until `init` makes it.
    let env = TestEnv::uninit();
    let dir = env.root().join("from-var");
    let put = || {
        let mut cmd = env.bare_command();
        cmd.env("TOOLCTL_CATALOG", &dir)
            .args(["bundle", "put", "--slug", "b"]);
        Run::of(cmd, None)
    };
    put().failure(4).stderr_has(dir.to_str().unwrap());
    assert!(!dir.exists());
    let mut cmd = env.bare_command();
    cmd.env("TOOLCTL_CATALOG", &dir).arg("init");
    Run::of(cmd, None).success();
    put().success();
    assert!(!env.xdg_data().exists());
}

#[test]
fn a_rejected_write_does_not_create_the_default_catalog() {
    // "Created on first write": a command that writes nothing (it was refused) must not leave
    // an empty catalog behind, nor announce one.
    let env = TestEnv::uninit();
    let default = env.xdg_data().join("toolctl");
    for args in [
        &["tool", "delete", "builtin/now"][..],
        &["tool", "disable", "no-such-tool"][..],
        &["bundle", "delete", "no-such-bundle"][..],
    ] {
        let mut cmd = env.bare_command();
        cmd.args(args);
        let run = Run::of(cmd, None);
        assert_ne!(run.code(), 0, "{run}");
        assert!(!run.stderr.contains("Created a new catalog"), "{run}");
        assert!(!default.exists(), "{run}");
    }
}

/// `--catalog .` (or `sub/./x`) is the folder itself in every path a command prints, not
/// `<folder>/.` (`…/c2/./toolctl.json`).
#[test]
fn a_catalog_named_with_dots_is_printed_without_them() {
    let env = TestEnv::new();
    let catalog = env.catalog().to_owned();
    let status = |dir: &Path, name: &str| {
        let mut cmd = env.bare_command();
        cmd.current_dir(dir)
            .args(["--catalog", name, "--json", "index", "status"]);
        Run::of(cmd, None).success().json()
    };
    let parent = catalog.parent().unwrap();
    let leaf = catalog.file_name().unwrap().to_str().unwrap();
    for (dir, name) in [
        (catalog.as_path(), "."),
        (catalog.as_path(), "./"),
        (parent, &format!("./{leaf}/.")),
    ] {
        let path = status(dir, name)["path"].as_str().unwrap().to_owned();
        assert!(
            !path.contains("/./") && !path.ends_with("/."),
            "{name}: {path}"
        );
        assert!(
            path.starts_with(catalog.to_str().unwrap()),
            "{name}: {path}"
        );
    }
}
