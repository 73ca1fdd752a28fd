//! Writes never leave the catalog through a symlink. A catalog cloned from a
//! hostile repository can hold `bundles`, a bundle folder, its `tools`, a tool's folder,
//! `.toolctl` or `schemas` as a link to a folder outside it; reads already refuse to follow
//! one, and every write (put, import, delete, reap, init, the lock, the index, `tool new`'s
//! schemas) refuses it too, with nothing written or removed outside.

use crate::common::{Run, TestEnv, tool_doc};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Every file and folder under `dir`, with the bytes of each file.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
    let mut seen = BTreeMap::new();
    let mut todo = vec![dir.to_owned()];
    while let Some(at) = todo.pop() {
        for entry in std::fs::read_dir(&at).unwrap().flatten() {
            let path = entry.path();
            if entry.file_type().unwrap().is_dir() {
                seen.insert(path.clone(), None);
                todo.push(path);
            } else {
                seen.insert(path.clone(), Some(std::fs::read(&path).unwrap()));
            }
        }
    }
    seen
}

/// Move `inside` (a folder of the catalog) to `away`, outside it, and put a symlink to it in
/// its place.
fn link_out(inside: &Path, away: &Path) {
    std::fs::create_dir_all(away.parent().unwrap()).unwrap();
    if inside.exists() {
        std::fs::rename(inside, away).unwrap();
    } else {
        std::fs::create_dir_all(away).unwrap();
    }
    std::os::unix::fs::symlink(away, inside).unwrap();
}

/// The refusal of a write through the symlink `link` (relative to the catalog): exit 3, the
/// link named.
#[track_caller]
fn refused(run: &Run, link: &str) {
    run.failure(3);
    // Human on stderr; `--json` (try_put_tool) on stdout, the same words.
    let said = format!("{}{}", run.stdout, run.stderr.replace("\\", ""));
    for needle in [
        format!("'{link}' in the catalog is a symlink to "),
        "outside it; toolctl writes only inside its catalog".to_owned(),
    ] {
        assert!(said.contains(&needle), "{needle:?} not said:\n{said}");
    }
}

/// An archive of a one-tool bundle `imported`, made in another catalog.
fn archive(env: &TestEnv) -> String {
    let other = TestEnv::new();
    other.bundle("imported");
    other.put_tool("imported", &tool_doc("brought", "v1"));
    let path = env.root().join("inputs").join("imported.zip");
    other
        .run(&["bundle", "export", "imported", "-o", path.to_str().unwrap()])
        .success();
    path.to_str().unwrap().to_owned()
}

#[test]
fn writes_refuse_every_kind_of_symlink_out_of_the_catalog() {
    for kind in ["bundles", "bundle", "tools", "tool", ".toolctl", "schemas"] {
        let env = TestEnv::new();
        let id = env.bundle("b");
        env.put_tool("b", &tool_doc("x", "v1"));
        env.bundle("gone");
        env.run(&["bundle", "delete", "gone"]).success();
        // The index and lock exist before the link is made, as in a used catalog.
        env.run(&["search", "now"]).success();
        let zip = archive(&env);
        let link = match kind {
            "bundles" => "bundles".to_owned(),
            "bundle" => format!("bundles/{id}"),
            "tools" => format!("bundles/{id}/tools"),
            "tool" => format!("bundles/{id}/tools/x"),
            other => other.to_owned(),
        };
        let away = env.root().join("outside");
        link_out(&env.catalog().join(&link), &away);
        // What an interrupted reap or import would have left: the next one removes it.
        for leftover in [".reaping-x", ".import-x"] {
            std::fs::create_dir_all(away.join(leftover)).unwrap();
            std::fs::write(away.join(leftover).join("kept"), "kept").unwrap();
        }
        let before = snapshot(&away);

        // The write that goes through this link is refused, naming it.
        let through = match kind {
            "bundles" => env.run(&["bundle", "put", "--slug", "new"]),
            "bundle" => {
                let doc = serde_json::json!({ "bundleID": id, "slug": "again" });
                env.run(&["bundle", "put", "--file", &env.input(&doc)])
            }
            "tools" => env.try_put_tool("b", &tool_doc("y", "v1")),
            "tool" => env.try_put_tool("b", &tool_doc("x", "v2")),
            ".toolctl" => env.run(&["init"]),
            _ => env.run(&["tool", "new", "--type", "native", "b", "fresh"]),
        };
        refused(&through, &link);
        if kind == "schemas" {
            assert!(
                !env.refs(&[]).contains(&"b/fresh@v1".to_owned()),
                "tool new wrote half"
            );
        }
        if kind == "bundles" {
            refused(&env.run(&["bundle", "import", &zip]), &link);
        }
        if kind == ".toolctl" {
            refused(&env.run(&["tool", "delete", "b/x@v1"]), &link);
            refused(&env.run(&["bundle", "reap", "--older-than", "0s"]), &link);
        }

        // No other write leaves the catalog either, whatever it answers.
        for args in [
            &[
                "tool",
                "put",
                "--bundle",
                "b",
                &env.input(&tool_doc("z", "v1")),
            ][..],
            &["bundle", "put", "--slug", "other"],
            &["bundle", "import", &zip],
            &["bundle", "import", "--as-new", "--slug", "copy", &zip],
            &["tool", "new", "--type", "native", "b", "fresh"],
            &["tool", "disable", "b/x@v1"],
            &["tool", "delete", "b/x@v1"],
            &["bundle", "delete", "b"],
            &["bundle", "reap", "--older-than", "0s"],
            &["index", "rebuild"],
            &["search", "now"],
            &["init"],
        ] {
            let run = env.run(args);
            assert_eq!(snapshot(&away), before, "{kind}: {args:?} changed {away:?}");
            // Refused by the write (3), or by the read before it (the bundle is not seen: 4).
            assert!(
                [0, 3, 4].contains(&run.code()),
                "{kind}: {args:?}: {}",
                run.stderr
            );
        }
    }
}

/// `init` of a folder whose `.toolctl` is a link out writes nothing there and leaves no
/// half-made catalog.
#[test]
fn init_refuses_a_state_folder_linked_out_and_leaves_nothing() {
    let env = TestEnv::uninit();
    std::fs::create_dir_all(env.catalog()).unwrap();
    let away = env.root().join("outside");
    link_out(&env.catalog().join(".toolctl"), &away);
    refused(&env.run(&["init"]), ".toolctl");
    assert_eq!(snapshot(&away), BTreeMap::new());
    let mut left: Vec<_> = std::fs::read_dir(env.catalog())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    left.sort();
    assert_eq!(left, [".toolctl"], "init left a half-made catalog");
}

/// A symlink that stays inside the catalog is followed by writes, as reads follow it.
#[test]
fn a_symlink_that_stays_inside_the_catalog_is_written_through() {
    let env = TestEnv::new();
    let id = env.bundle("b");
    env.put_tool("b", &tool_doc("x", "v1"));
    let tools = env.bundle_dir(&id).join("tools");
    let vendored = env.catalog().join("vendor/tools");
    std::fs::create_dir_all(vendored.parent().unwrap()).unwrap();
    std::fs::rename(&tools, &vendored).unwrap();
    std::os::unix::fs::symlink(&vendored, &tools).unwrap();
    env.put_tool("b", &tool_doc("y", "v1"));
    assert!(vendored.join("y/v1/tool.json").is_file());
    env.run(&["tool", "delete", "b/x@v1"]).success();
    assert!(!vendored.join("x").exists());
}

/// toolctl's own state databases under `.toolctl/` are not opened through a symlink that
/// leads out of the catalog (`usage.sqlite` is never created there): the
/// call runs, its use is not counted, nothing is written outside.
#[test]
fn a_usage_database_linked_out_of_the_catalog_is_not_written() {
    let env = TestEnv::new();
    env.run(&["search", "now"]).success();
    let away = env.work().join("away");
    std::fs::create_dir_all(&away).unwrap();
    let state = env.catalog().join(".toolctl");
    std::os::unix::fs::symlink(away.join("usage.sqlite"), state.join("usage.sqlite")).unwrap();
    env.run(&["invoke", "builtin/now"]).success();
    assert_eq!(
        snapshot(&away),
        BTreeMap::new(),
        "the usage database was written outside the catalog"
    );
}

/// A catalog whose index file, or whose `.toolctl`, is a symlink out of it keeps its search
/// index in the cache folder and says so with that reason, naming the link (not saying
/// the catalog "cannot be written", which it can). What the link leads to is left as it
/// was.
#[test]
fn an_index_linked_out_of_the_catalog_is_kept_in_the_cache_and_the_link_named() {
    for link in [".toolctl/index.sqlite", ".toolctl"] {
        let env = TestEnv::new();
        env.run(&["tool", "list"]).success();
        let state = env.catalog().join(".toolctl");
        let away = env.work().join("away");
        if link == ".toolctl" {
            link_out(&state, &away.join("state"));
        } else {
            for entry in std::fs::read_dir(&state).unwrap().flatten() {
                if entry
                    .file_name()
                    .to_string_lossy()
                    .starts_with("index.sqlite")
                {
                    std::fs::remove_file(entry.path()).unwrap();
                }
            }
            std::fs::create_dir_all(&away).unwrap();
            std::fs::write(away.join("victim.txt"), "hi\n").unwrap();
            std::os::unix::fs::symlink(away.join("victim.txt"), state.join("index.sqlite"))
                .unwrap();
        }
        let before = snapshot(&away);
        let run = env.run(&["search", "time"]);
        run.success().stdout_has("builtin/now");
        for needle in [
            format!("'{link}' in the catalog is a symlink to "),
            "outside it, and toolctl writes only inside its catalog: its search index is kept in "
                .to_owned(),
        ] {
            assert!(run.stderr.contains(&needle), "{link}: {needle:?}\n{run}");
        }
        assert!(!run.stderr.contains("cannot be written"), "{link}\n{run}");
        assert_eq!(snapshot(&away), before, "{link}: written through the link");
    }
}
