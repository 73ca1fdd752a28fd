//! `toolctl bundle export` and `bundle import`: bundles as ZIP archives.
//!
//! Round trips are byte for byte, exports are deterministic, and hostile archives (path
//! traversal, symlinks, duplicates, lying or huge sizes, broken documents) are refused with
//! the entry named and nothing written: the catalog's tree is compared before and after.

use crate::common::{
    TestEnv, assert_uuid_v7, bundle_view, keys, ordered, read_json, timestamp, tool_doc,
    tool_doc_with,
};
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::io::{Cursor, Read, Write};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipArchive, ZipWriter};

/// `bundle export --json`, pinned.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ExportDoc {
    bundle: Value,
    file: PathBuf,
    tools: usize,
    bytes: u64,
}

/// `bundle import --json`, pinned.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ImportDoc {
    bundle: Value,
    tools: usize,
    as_new: bool,
}

/// Every file and folder under `dir` except `.toolctl/` (derived state a read may touch):
/// relative path → bytes (`None` for a folder). Hidden entries included.
fn snapshot(dir: &Path) -> BTreeMap<String, Option<Vec<u8>>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Option<Vec<u8>>>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if rel == ".toolctl" {
                continue;
            }
            if entry.file_type().unwrap().is_dir() {
                out.insert(rel, None);
                walk(root, &path, out);
            } else {
                out.insert(rel, Some(std::fs::read(&path).unwrap()));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// The names of a catalog's `bundles/` entries that start with `.import-`.
fn staging_leftovers(env: &TestEnv) -> Vec<String> {
    std::fs::read_dir(env.catalog().join("bundles"))
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(".import-"))
                .collect()
        })
        .unwrap_or_default()
}

/// Build a ZIP archive from `(name, bytes)` pairs (a name ending in `/` is a folder entry).
fn zip_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
    zip_with(entries, CompressionMethod::Deflated)
}

fn zip_with(entries: &[(&str, &[u8])], method: CompressionMethod) -> Vec<u8> {
    let options = SimpleFileOptions::default().compression_method(method);
    let mut writer = ZipWriter::new(Cursor::new(Vec::new()));
    for (name, bytes) in entries {
        if name.ends_with('/') {
            writer.add_directory(*name, options).unwrap();
        } else {
            writer.start_file(*name, options).unwrap();
            writer.write_all(bytes).unwrap();
        }
    }
    writer.finish().unwrap().into_inner()
}

/// The files of an archive, in archive order.
fn unzip(bytes: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut archive = ZipArchive::new(Cursor::new(bytes)).unwrap();
    (0..archive.len())
        .map(|i| {
            let mut file = archive.by_index(i).unwrap();
            let mut data = Vec::new();
            file.read_to_end(&mut data).unwrap();
            (file.name().unwrap().into_owned(), data)
        })
        .collect()
}

/// Replace every occurrence of `from` with `to` (same length) in an archive's bytes: renames
/// an entry in its local header and the central directory alike, past any check a ZIP writer
/// makes on names.
fn rename_entry(bytes: &mut [u8], from: &str, to: &[u8]) {
    assert_eq!(from.len(), to.len(), "a rename keeps the length");
    let from = from.as_bytes();
    let mut found = 0;
    let mut i = 0;
    while i + from.len() <= bytes.len() {
        if &bytes[i..i + from.len()] == from {
            bytes[i..i + from.len()].copy_from_slice(to);
            found += 1;
            i += from.len();
        } else {
            i += 1;
        }
    }
    assert_eq!(
        found, 2,
        "the name is in the local header and the central directory"
    );
}

/// Set the declared uncompressed size of entry `name`, in its local header and its central
/// directory record alike (so the two headers still agree).
fn declare_size(bytes: &mut [u8], name: &str, size: u32) {
    let mut patched = 0;
    for i in 0..bytes.len().saturating_sub(46) {
        let (name_at, size_at, name_len_at) = match &bytes[i..i + 4] {
            b"PK\x03\x04" => (i + 30, i + 22, i + 26),
            b"PK\x01\x02" => (i + 46, i + 24, i + 28),
            _ => continue,
        };
        let len = u16::from_le_bytes([bytes[name_len_at], bytes[name_len_at + 1]]) as usize;
        if bytes.get(name_at..name_at + len) == Some(name.as_bytes()) {
            bytes[size_at..size_at + 4].copy_from_slice(&size.to_le_bytes());
            patched += 1;
        }
    }
    assert_eq!(patched, 2, "{name}: local header and central directory");
}

/// Set the declared compressed and uncompressed sizes of every entry, in both headers.
fn declare_all_sizes(bytes: &mut [u8], size: u32) {
    for i in 0..bytes.len().saturating_sub(46) {
        let at = match &bytes[i..i + 4] {
            b"PK\x03\x04" => i + 18,
            b"PK\x01\x02" => i + 20,
            _ => continue,
        };
        bytes[at..at + 4].copy_from_slice(&size.to_le_bytes());
        bytes[at + 4..at + 8].copy_from_slice(&size.to_le_bytes());
    }
}

/// Write bytes to a fresh file under the test's `inputs/` folder; returns its path.
fn input_file(env: &TestEnv, name: &str, bytes: &[u8]) -> String {
    let path = env.root().join("inputs").join(name);
    std::fs::write(&path, bytes).unwrap();
    path.to_str().unwrap().to_owned()
}

/// A catalog holding bundle `clock` (two versions of a native tool, one disabled, one with an
/// unknown field) and bundle `other`. Returns the env and clock's bundleID.
fn clock_catalog() -> (TestEnv, String) {
    let env = TestEnv::new();
    let id = env.bundle("clock");
    env.put_tool(
        "clock",
        &tool_doc_with(
            "tick",
            "v1",
            json!({ "x-team": { "owner": "ops" }, "tags": ["time"] }),
        ),
    );
    env.put_tool("clock", &tool_doc("tick", "v2"));
    env.put_tool("clock", &tool_doc("tock", "v1"));
    env.run(&["tool", "disable", "clock/tick@v2"]).success();
    env.bundle("other");
    env.put_tool("other", &tool_doc("thing", "v1"));
    (env, id)
}

/// Export `bundle` to a file under `inputs/`; returns the path and the archive's bytes.
fn export(env: &TestEnv, bundle: &str, name: &str) -> (String, Vec<u8>) {
    let path = env.root().join("inputs").join(name);
    let path = path.to_str().unwrap().to_owned();
    env.run(&["bundle", "export", bundle, "-o", &path])
        .success();
    let bytes = std::fs::read(&path).unwrap();
    (path, bytes)
}

/// The archive of a valid one-tool bundle, as `(name, bytes)` pairs to tamper with.
fn valid_files() -> Vec<(String, Vec<u8>)> {
    let (env, _) = clock_catalog();
    let (_, bytes) = export(&env, "other", "other.zip");
    unzip(&bytes)
}

fn zip_files(files: &[(String, Vec<u8>)]) -> Vec<u8> {
    let entries: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(n, b)| (n.as_str(), b.as_slice()))
        .collect();
    zip_of(&entries)
}

fn set_file(files: &mut [(String, Vec<u8>)], name: &str, doc: &Value) {
    let file = files.iter_mut().find(|(n, _)| n == name).unwrap();
    file.1 = serde_json::to_vec_pretty(doc).unwrap();
}

fn file_doc(files: &[(String, Vec<u8>)], name: &str) -> Value {
    let (_, bytes) = files.iter().find(|(n, _)| n == name).unwrap();
    serde_json::from_slice(bytes).unwrap()
}

/// Import `bytes` into `env` expecting a refusal with exit `code`; the catalog must not change
/// and no staging folder may be left. Returns the error document.
#[track_caller]
fn refused(env: &TestEnv, bytes: &[u8], code: i32) -> crate::common::ErrorDoc {
    let before = snapshot(env.catalog());
    let file = input_file(env, "hostile.zip", bytes);
    let err = env.json_error(&["bundle", "import", &file], code);
    assert_eq!(
        snapshot(env.catalog()),
        before,
        "a refused import writes nothing"
    );
    assert_eq!(staging_leftovers(env), Vec::<String>::new());
    let human = env.run(&["bundle", "import", &file]);
    human.failure(code);
    assert!(human.stderr.starts_with("error: "), "{human}");
    assert_eq!(snapshot(env.catalog()), before);
    err
}

/// The problems of a VALIDATION_ERROR about an archive, as (pointer, message).
fn problems(err: &crate::common::ErrorDoc) -> Vec<(String, String)> {
    assert_eq!(err.error.code, "VALIDATION_ERROR", "{err:?}");
    err.error.details["problems"]
        .as_array()
        .unwrap_or_else(|| panic!("no problems: {err:?}"))
        .iter()
        .map(|p| {
            (
                p["pointer"].as_str().unwrap().to_owned(),
                p["message"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn round_trip_into_a_fresh_catalog_is_byte_for_byte() {
    let source = TestEnv::fixture();
    let weather = source.json(&["bundle", "get", "weather"]);
    let id = weather["bundleID"].as_str().unwrap().to_owned();
    let (file, bytes) = export(&source, "weather", "weather.zip");

    // The archive holds bundle.json and every version, sorted, with a fixed timestamp.
    let mut archive = ZipArchive::new(Cursor::new(&bytes)).unwrap();
    let names: Vec<String> = archive
        .file_names()
        .map(|n| n.unwrap().into_owned())
        .collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
    assert_eq!(names[0], "bundle.json");
    assert_eq!(names.len(), 7, "{names:?}");
    for i in 0..archive.len() {
        let entry = archive.by_index(i).unwrap();
        assert_eq!(
            entry.last_modified().unwrap(),
            zip::DateTime::default(),
            "fixed timestamp"
        );
        assert!(entry.is_file());
    }

    let target = TestEnv::new();
    let run = target.run(&["bundle", "import", &file]);
    run.success();
    assert_eq!(run.stdout, "");
    assert_eq!(
        source.normalize(&run.stderr),
        "Imported bundle weather (6 tools) from [TMP]/inputs/weather.zip\n"
    );
    // Byte-identical files, nothing else in the folder.
    assert_eq!(
        snapshot(&target.bundle_dir(&id)),
        snapshot(&source.bundle_dir(&id))
    );
    assert_eq!(staging_leftovers(&target), Vec::<String>::new());

    // The tools work: listed, resolved, shown with their documents.
    let all = ["--bundle", "weather", "--include-disabled"];
    assert_eq!(target.refs(&all), source.refs(&all));
    let got = target.json(&["tool", "get", "weather/forecast@v2"]);
    let want = source.json(&["tool", "get", "weather/forecast@v2"]);
    assert_eq!(ordered(&got["document"]), ordered(&want["document"]));
    assert_eq!(got["toolID"], want["toolID"]);
    // Until this catalog allows the tools' host, they are unavailable, with the reason.
    assert!(!got["available"].as_bool().unwrap(), "{got}");
    target.edit_config(|c| c["allowedHosts"] = source.config()["allowedHosts"].clone());
    assert_eq!(
        target.json(&["tool", "get", "weather/forecast@v2"])["available"],
        true
    );
    // The index knows them.
    let found = target.json(&["search", "forecast"]);
    assert!(found.to_string().contains("weather/forecast@v2"), "{found}");
}

#[test]
fn imported_tools_can_be_invoked_and_json_is_pinned() {
    let (source, id) = clock_catalog();
    let path = source.root().join("inputs").join("clock.zip");
    let export: ExportDoc = source
        .run(&[
            "--json",
            "bundle",
            "export",
            "clock",
            "-o",
            path.to_str().unwrap(),
        ])
        .success()
        .parse();
    assert_eq!(export.file, path);
    assert_eq!(export.tools, 3, "every version, the disabled one too");
    assert_eq!(export.bytes, std::fs::metadata(&path).unwrap().len());
    let (view, extra) = bundle_view(export.bundle, &["document"]);
    assert_eq!(view.bundle_id, id);
    assert_eq!(view.slug, "clock");
    assert_eq!(view.tool_count, Some(3));
    assert_eq!(
        extra["document"],
        read_json(&source.bundle_dir(&id).join("bundle.json"))
    );

    let target = TestEnv::new();
    let import: ImportDoc = target
        .run(&["--json", "bundle", "import", path.to_str().unwrap()])
        .success()
        .parse();
    assert_eq!(import.tools, 3);
    assert!(!import.as_new);
    let (view, extra) = bundle_view(import.bundle, &["document"]);
    let (get, get_extra) = bundle_view(target.json(&["bundle", "get", "clock"]), &["document"]);
    assert_eq!(view, get, "printed as `bundle get` prints it");
    assert_eq!(extra, get_extra);

    let disabled = target.json(&["tool", "get", "clock/tick@v2"]);
    assert_eq!(disabled["isEnabled"], false);
    let run = target.run(&["--json", "invoke", "clock/tick@v1", "--args", "{}"]);
    run.success();
    assert_eq!(run.json()["ok"], true, "{run}");
}

#[test]
fn export_is_deterministic() {
    let (env, _) = clock_catalog();
    let (_, first) = export(&env, "clock", "one.zip");
    // Reads, index syncs and time passing change nothing.
    env.run(&["tool", "list"]).success();
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let (_, second) = export(&env, "clock", "two.zip");
    assert_eq!(first, second);
    // The same through standard output.
    let output = env
        .command(&["bundle", "export", "clock", "-o", "-"])
        .output()
        .unwrap();
    assert!(output.status.success());
    assert_eq!(output.stdout, first);
    assert_eq!(
        String::from_utf8(output.stderr).unwrap(),
        "Exported bundle clock (3 tools) to standard output\n"
    );
}

#[test]
fn export_refuses_what_it_cannot_do() {
    let (env, id) = clock_catalog();
    let err = env.json_error(&["bundle", "export", "builtin", "-o", "x.zip"], 6);
    assert_eq!(err.error.code, "FORBIDDEN");
    assert!(
        err.error
            .message
            .contains("built-in bundle cannot be exported")
    );
    assert!(
        err.error
            .hint
            .unwrap()
            .contains("toolctl export --provider")
    );

    let err = env.json_error(&["bundle", "export", "nope", "-o", "x.zip"], 4);
    assert_eq!(err.error.code, "NOT_FOUND");

    // An existing file is a conflict unless --force.
    let (path, first) = export(&env, "clock", "clock.zip");
    std::fs::write(&path, b"keep me").unwrap();
    let err = env.json_error(&["bundle", "export", "clock", "-o", &path], 5);
    assert_eq!(err.error.code, "CONFLICT");
    assert_eq!(err.error.details["path"], path.as_str());
    assert_eq!(
        err.error.hint.as_deref(),
        Some("pass --force to replace it")
    );
    assert_eq!(std::fs::read(&path).unwrap(), b"keep me");
    env.run(&["bundle", "export", "clock", "-o", &path, "--force"])
        .success();
    assert_eq!(std::fs::read(&path).unwrap(), first);

    // The output's folder must exist; it is not made on the way.
    let nowhere = env.root().join("inputs/missing/clock.zip");
    let err = env.json_error(
        &["bundle", "export", "clock", "-o", nowhere.to_str().unwrap()],
        1,
    );
    assert_eq!(err.error.code, "INTERNAL");
    assert!(!nowhere.parent().unwrap().exists());

    // --json and -o - would both write to stdout.
    let err = env.json_error(&["bundle", "export", "clock", "-o", "-"], 2);
    assert!(err.error.message.contains("-o -"), "{err:?}");

    // A file that does not parse is named, never silently dropped; nothing is written.
    let broken = env.tool_file(&id, "tock", "v1");
    std::fs::write(&broken, "{ \"slug\": ").unwrap();
    let out = env.root().join("inputs").join("broken.zip");
    let err = env.json_error(
        &["bundle", "export", "clock", "-o", out.to_str().unwrap()],
        3,
    );
    assert_eq!(err.error.code, "VALIDATION_ERROR");
    assert_eq!(
        err.error.details["file"],
        env.bundle_dir(&id).to_str().unwrap()
    );
    let found = problems(&err);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, "tools/tock/v1/tool.json");
    assert!(found[0].1.contains("line 1 column"), "{found:?}");
    assert!(!out.exists());
}

#[test]
fn export_leaves_out_foreign_files_with_a_warning() {
    let (env, id) = clock_catalog();
    std::fs::write(env.bundle_dir(&id).join("NOTES.md"), "notes").unwrap();
    std::fs::write(env.bundle_dir(&id).join(".toolctl-tmp-x"), "temp").unwrap();
    let out = env.root().join("inputs").join("clock.zip");
    let run = env.run(&["bundle", "export", "clock", "-o", out.to_str().unwrap()]);
    run.success();
    assert_eq!(
        env.normalize(&run.stderr),
        "warning: left out [TMP]/catalog/bundles/[UUID]/NOTES.md: not part of a bundle (only bundle.json and tools/<slug>/<version>/tool.json are)\n\
         Exported bundle clock (3 tools) to [TMP]/inputs/clock.zip\n"
    );
    let names: Vec<String> = unzip(&std::fs::read(&out).unwrap())
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(
        names,
        [
            "bundle.json",
            "tools/tick/v1/tool.json",
            "tools/tick/v2/tool.json",
            "tools/tock/v1/tool.json"
        ]
    );
}

#[test]
fn plain_reimport_is_a_conflict_that_names_everything() {
    let (env, id) = clock_catalog();
    let (file, _) = export(&env, "clock", "clock.zip");
    let before = snapshot(env.catalog());
    let err = env.json_error(&["bundle", "import", &file], 5);
    assert_eq!(err.error.code, "CONFLICT");
    assert_eq!(
        err.error.message,
        "cannot import bundle 'clock': 5 conflicts with the catalog"
    );
    assert_eq!(err.error.details["bundleID"], id.as_str());
    let conflicts = err.error.details["conflicts"].as_array().unwrap();
    let kinds: Vec<&str> = conflicts
        .iter()
        .map(|c| c["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["bundleID", "slug", "toolID", "toolID", "toolID"]);
    assert_eq!(conflicts[0]["value"], id.as_str());
    assert_eq!(conflicts[1]["value"], "clock");
    assert_eq!(conflicts[2]["entry"], "tools/tick/v1/tool.json");
    assert_eq!(conflicts[2]["usedBy"], "clock/tick@v1");
    assert!(
        err.error.hint.unwrap().contains("--as-new --slug NEW"),
        "the hint says how to import a copy"
    );
    assert_eq!(snapshot(env.catalog()), before, "nothing written");
    assert_eq!(staging_leftovers(&env), Vec::<String>::new());

    // Human output lists each conflict.
    let run = env.run(&["bundle", "import", &file]);
    run.failure(5);
    assert_eq!(run.stderr.matches("caused by: toolID ").count(), 3, "{run}");
    run.stderr_has("caused by: bundleID ")
        .stderr_has("caused by: bundle slug 'clock' is already used by bundle ");

    // --as-new alone still collides on the slug.
    let err = env.json_error(&["bundle", "import", &file, "--as-new"], 5);
    let conflicts = err.error.details["conflicts"].as_array().unwrap();
    assert_eq!(conflicts.len(), 1);
    assert_eq!(conflicts[0]["kind"], "slug");
    assert!(err.error.hint.unwrap().contains("--slug NEW"));
    assert_eq!(snapshot(env.catalog()), before);

    // A bad --slug is invalid input.
    let err = env.json_error(&["bundle", "import", &file, "--as-new", "--slug", "a_b"], 3);
    assert_eq!(err.error.details["file"], "--slug");
    let err = env.json_error(&["bundle", "import", &file, "--slug", "builtin"], 3);
    assert!(err.error.message.contains("built-in"), "{err:?}");
    assert_eq!(snapshot(env.catalog()), before);
}

#[test]
fn as_new_imports_a_copy_with_new_ids() {
    let (env, id) = clock_catalog();
    let (file, _) = export(&env, "clock", "clock.zip");
    let started = jiff::Timestamp::now();
    let import: ImportDoc = env
        .run(&[
            "--json",
            "bundle",
            "import",
            &file,
            "--as-new",
            "--slug",
            "clock-copy",
        ])
        .success()
        .parse();
    assert!(import.as_new);
    assert_eq!(import.tools, 3);
    let (view, doc) = bundle_view(import.bundle, &["document"]);
    let doc = &doc["document"];
    assert_uuid_v7(&view.bundle_id);
    assert_ne!(view.bundle_id, id);
    assert_eq!(view.slug, "clock-copy");
    assert_eq!(view.display_name, "clock", "only the slug changes");
    let original = read_json(&env.bundle_dir(&id).join("bundle.json"));
    assert_eq!(keys(doc), keys(&original), "key order kept");
    for field in ["createdAt", "modifiedAt"] {
        let at = timestamp(doc[field].as_str().unwrap());
        assert!(
            at >= started
                .checked_sub(jiff::SignedDuration::from_secs(1))
                .unwrap()
        );
    }

    for (slug, version) in [("tick", "v1"), ("tick", "v2"), ("tock", "v1")] {
        let old = read_json(&env.tool_file(&id, slug, version));
        let new = read_json(&env.tool_file(&view.bundle_id, slug, version));
        assert_uuid_v7(new["toolID"].as_str().unwrap());
        assert_ne!(new["toolID"], old["toolID"]);
        assert_eq!(new["bundleID"], view.bundle_id.as_str());
        // Tools keep their own timestamps, unknown fields and key order.
        assert_eq!(new["createdAt"], old["createdAt"]);
        assert_eq!(new["modifiedAt"], old["modifiedAt"]);
        assert_eq!(keys(&new), keys(&old));
        let mut same = new.clone();
        same["toolID"] = old["toolID"].clone();
        same["bundleID"] = old["bundleID"].clone();
        assert_eq!(ordered(&same), ordered(&old));
    }
    let tick = read_json(&env.tool_file(&view.bundle_id, "tick", "v1"));
    assert_eq!(tick["x-team"], json!({ "owner": "ops" }));

    // Both bundles are there, each with its tools; names resolve per bundle.
    assert_eq!(
        env.refs(&["--bundle", "clock-copy", "--include-disabled"]),
        [
            "clock-copy/tick@v1",
            "clock-copy/tick@v2",
            "clock-copy/tock@v1"
        ]
    );
    assert_eq!(
        env.json(&["tool", "get", "clock-copy/tock"])["bundleID"],
        view.bundle_id.as_str()
    );
    // A second copy is fine too, and the human line says what happened.
    let run = env.run(&["bundle", "import", &file, "--as-new", "--slug", "clock-3"]);
    run.success();
    assert!(
        env.normalize(&run.stderr).starts_with(
            "Imported bundle clock-3 (3 tools) from [TMP]/inputs/clock.zip as a copy with new IDs ([UUID])"
        ),
        "{run}"
    );
}

#[test]
fn slug_alone_renames_a_bundle_whose_id_is_free() {
    let (source, id) = clock_catalog();
    let (file, _) = export(&source, "clock", "clock.zip");
    let target = TestEnv::new();
    target.bundle("clock");
    let err = target.json_error(&["bundle", "import", &file], 5);
    assert_eq!(err.error.details["conflicts"][0]["kind"], "slug");
    assert!(err.error.hint.unwrap().contains("--slug NEW"));
    let import: ImportDoc = target
        .run(&["--json", "bundle", "import", &file, "--slug", "clock2"])
        .success()
        .parse();
    let (view, _) = bundle_view(import.bundle, &["document"]);
    assert_eq!(view.bundle_id, id, "the ID is kept");
    assert_eq!(view.slug, "clock2");
    // The tools are the archive's bytes.
    assert_eq!(
        std::fs::read(target.tool_file(&id, "tick", "v1")).unwrap(),
        std::fs::read(source.tool_file(&id, "tick", "v1")).unwrap()
    );
}

#[test]
fn import_reads_standard_input() {
    let (source, id) = clock_catalog();
    let (_, bytes) = export(&source, "clock", "clock.zip");
    let target = TestEnv::new();
    let mut child = target
        .command(&["bundle", "import", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&bytes).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        String::from_utf8(output.stderr).unwrap(),
        "Imported bundle clock (3 tools) from standard input\n"
    );
    assert_eq!(
        snapshot(&target.bundle_dir(&id)),
        snapshot(&source.bundle_dir(&id))
    );
}

#[test]
fn hostile_entry_names_are_refused_with_nothing_written() {
    let env = TestEnv::new();
    env.bundle("existing");
    let good = valid_files();
    let cases: &[(&[u8], &str)] = &[
        (b"../../etc/passwd", "the entry name has a '..' component"),
        (b"tools/../../x.json", "the entry name has a '..' component"),
        (b"/etc/passwd", "the entry name is an absolute path"),
        (
            b"tools\\a\\v1\\tool.json",
            "the entry name holds a backslash; archive paths use '/'",
        ),
        (
            b"C:/bundle.json",
            "the entry name starts with a drive letter",
        ),
        (b"bundle.json\0x", "the entry name holds a NUL character"),
        (
            b"README.md",
            "the entry is not part of a bundle: an archive holds only bundle.json and tools/<slug>/<version>/tool.json",
        ),
        (b".hidden/bundle.json", "the entry is not part of a bundle"),
        // Look-alikes of '/' and '.' are not separators, and no slug or version holds them.
        (
            "tools/a\u{2215}b/v1/tool.json".as_bytes(),
            "the entry is not part of a bundle (the slug 'a\u{2215}b' has '\u{2215}' (U+2215)",
        ),
        (
            "tools/a/\u{ff0e}\u{ff0e}/tool.json".as_bytes(),
            "the entry is not part of a bundle (the version '\u{ff0e}\u{ff0e}' has '\u{ff0e}' (U+FF0E)",
        ),
        (
            "tools\u{2044}a/v1/tool.json".as_bytes(),
            "the entry is not part of a bundle",
        ),
    ];
    for (name, expected) in cases {
        let placeholder = "q".repeat(name.len());
        let mut files = good.clone();
        files.push((placeholder.clone(), b"{}".to_vec()));
        let mut bytes = zip_files(&files);
        rename_entry(&mut bytes, &placeholder, name);
        let err = refused(&env, &bytes, 3);
        let found = problems(&err);
        let shown = String::from_utf8_lossy(name).replace('\0', "\\u{0}");
        assert_eq!(found.len(), 1, "{shown}: {found:?}");
        assert_eq!(found[0].0, shown);
        assert!(found[0].1.starts_with(expected), "{shown}: {found:?}");
        assert!(err.error.message.contains(&shown), "{err:?}");
    }
}

#[test]
fn symlinks_and_duplicates_are_refused() {
    let env = TestEnv::new();
    let good = valid_files();

    // A symlink entry, even at a name the layout allows.
    let mut writer = ZipWriter::new(Cursor::new(Vec::new()));
    let options = SimpleFileOptions::default();
    for (name, bytes) in &good {
        writer.start_file(name.as_str(), options).unwrap();
        writer.write_all(bytes).unwrap();
    }
    writer
        .add_symlink("tools/evil/v1/tool.json", "/etc/passwd", options)
        .unwrap();
    let bytes = writer.finish().unwrap().into_inner();
    let err = refused(&env, &bytes, 3);
    assert_eq!(
        problems(&err),
        [(
            "tools/evil/v1/tool.json".to_owned(),
            "the entry is a symbolic link".to_owned()
        )]
    );

    // The same name twice (the second would silently win in most readers).
    let mut files = good.clone();
    let (tool_name, tool_bytes) = files[1].clone();
    let twin = tool_name.replacen("thing", "thinx", 1);
    files.push((twin.clone(), tool_bytes));
    let mut bytes = zip_files(&files);
    let mut fixed = twin.clone().into_bytes();
    fixed.copy_from_slice(tool_name.as_bytes());
    rename_entry(&mut bytes, &twin, &fixed);
    let err = refused(&env, &bytes, 3);
    assert_eq!(
        problems(&err),
        [(
            tool_name,
            "the entry appears twice in the archive".to_owned()
        )]
    );
}

#[test]
fn huge_declared_sizes_are_refused_before_reading() {
    let env = TestEnv::new();
    let mut files = valid_files();
    let name = files[1].0.clone();

    // 1 GB declared in both headers: refused from the central directory alone.
    let mut bytes = zip_with(
        &files
            .iter()
            .map(|(n, b)| (n.as_str(), b.as_slice()))
            .collect::<Vec<_>>(),
        CompressionMethod::Stored,
    );
    declare_size(&mut bytes, &name, 1_000_000_000);
    let err = refused(&env, &bytes, 3);
    assert_eq!(
        problems(&err),
        [(
            name.clone(),
            "the entry declares 953.7 MiB uncompressed; at most 4 MiB per file are allowed"
                .to_owned()
        )]
    );

    // A highly compressible 5 MiB entry.
    files.push((
        "tools/zeros/v1/tool.json".to_owned(),
        vec![b' '; 5 * 1024 * 1024],
    ));
    let err = refused(&env, &zip_files(&files), 3);
    let found = problems(&err);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, "tools/zeros/v1/tool.json");
    assert!(
        found[0]
            .1
            .starts_with("the entry declares 5 MiB uncompressed"),
        "{found:?}"
    );

    // 2 MiB expanding far beyond 200:1: a zip bomb, even though under the size cap.
    files.pop();
    files.push((
        "tools/zeros/v1/tool.json".to_owned(),
        vec![b' '; 2 * 1024 * 1024],
    ));
    let err = refused(&env, &zip_files(&files), 3);
    let found = problems(&err);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0]
            .1
            .contains("above 200:1 it is taken for a zip bomb"),
        "{found:?}"
    );
}

#[test]
fn a_declared_total_above_256_mib_is_refused() {
    let env = TestEnv::new();
    // 65 entries of 4 MiB each (within the per-file cap, ratio 1:1): 260 MiB in all.
    let names: Vec<String> = (0..65)
        .map(|i| format!("tools/t{i}/v1/tool.json"))
        .collect();
    let entries: Vec<(&str, &[u8])> = names.iter().map(|n| (n.as_str(), &b"{}"[..])).collect();
    let mut bytes = zip_with(&entries, CompressionMethod::Stored);
    declare_all_sizes(&mut bytes, 4 * 1024 * 1024);
    let err = refused(&env, &bytes, 3);
    assert_eq!(
        problems(&err),
        [(
            String::new(),
            "the entries declare 260 MiB uncompressed in all; at most 256 MiB are allowed"
                .to_owned()
        )]
    );
}

#[test]
fn lying_sizes_are_never_trusted() {
    let env = TestEnv::new();
    let mut files = valid_files();
    // 5 MiB of spaces that claims to be 1,000 bytes: reading stops past the 4 MiB cap.
    files.push((
        "tools/liar/v1/tool.json".to_owned(),
        vec![b' '; 5 * 1024 * 1024],
    ));
    let mut bytes = zip_files(&files);
    declare_size(&mut bytes, "tools/liar/v1/tool.json", 1000);
    let err = refused(&env, &bytes, 3);
    // The zip reader itself stops at the declared size; past the cap, toolctl's own
    // `take(cap + 1)` would.
    let liar = "the entry cannot be read: File is larger than its declared uncompressed size";
    assert_eq!(
        problems(&err),
        [("tools/liar/v1/tool.json".to_owned(), liar.to_owned())]
    );

    // A small entry holding more than it declares.
    let files = valid_files();
    let name = files[1].0.clone();
    let mut bytes = zip_with(
        &files
            .iter()
            .map(|(n, b)| (n.as_str(), b.as_slice()))
            .collect::<Vec<_>>(),
        CompressionMethod::Stored,
    );
    declare_size(&mut bytes, &name, 10);
    let err = refused(&env, &bytes, 3);
    assert_eq!(problems(&err), [(name, liar.to_owned())]);
}

#[test]
fn too_many_entries_and_not_a_zip_are_refused() {
    let env = TestEnv::new();
    let folders: Vec<String> = (0..20_001).map(|i| format!("tools/t{i}/")).collect();
    let entries: Vec<(&str, &[u8])> = folders.iter().map(|n| (n.as_str(), &b""[..])).collect();
    let err = refused(&env, &zip_of(&entries), 3);
    assert_eq!(
        problems(&err),
        [(
            String::new(),
            "the archive lists 20001 entries; at most 20000 are allowed".to_owned()
        )]
    );

    let err = refused(&env, b"this is not a zip archive", 3);
    let found = problems(&err);
    assert!(
        found[0].1.starts_with("not a ZIP archive toolctl can read"),
        "{found:?}"
    );

    // An empty archive has no bundle.json.
    let err = refused(&env, &zip_of(&[]), 3);
    assert_eq!(
        problems(&err),
        [(
            "bundle.json".to_owned(),
            "the archive has no bundle.json".to_owned()
        )]
    );
}

#[test]
fn broken_documents_are_reported_all_at_once_with_file_and_pointer() {
    let env = TestEnv::new();
    let good = valid_files();
    let tool = good[1].0.clone();
    assert_eq!(tool, "tools/thing/v1/tool.json");

    // One rule broken: the exact error.
    let mut files = good.clone();
    let mut doc = file_doc(&files, &tool);
    doc.as_object_mut().unwrap().shift_remove("argSchema");
    set_file(&mut files, &tool, &doc);
    let err = refused(&env, &zip_files(&files), 3);
    let file = env.root().join("inputs/hostile.zip");
    let pointer = "tools/thing/v1/tool.json#/argSchema";
    let message = "argSchema is missing; give the tool a JSON Schema for its arguments, or set allowNoSchema: true with a noSchemaMode";
    assert_eq!(
        err.error.message,
        format!("{}: {pointer}: {message}", file.display())
    );
    assert_eq!(
        err.error.details,
        json!({
            "file": file,
            "problems": [{ "pointer": pointer, "message": message }],
        })
    );

    // Several files broken: every problem, each with its file and pointer.
    let mut files = good.clone();
    let mut bundle = file_doc(&files, "bundle.json");
    bundle["slug"] = "bad slug".into();
    set_file(&mut files, "bundle.json", &bundle);
    let mut doc = file_doc(&files, &tool);
    doc["impl"] = json!({});
    doc["bundleID"] = uuid::Uuid::now_v7().to_string().into();
    set_file(&mut files, &tool, &doc);
    files.push((
        "tools/thing/v2/tool.json".to_owned(),
        b"{ \"slug\": \"thing\",\n  oops }".to_vec(),
    ));
    let err = refused(&env, &zip_files(&files), 3);
    let found = problems(&err);
    let pointers: Vec<&str> = found.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(
        pointers,
        [
            "bundle.json#/slug",
            "tools/thing/v1/tool.json#/bundleID",
            "tools/thing/v1/tool.json#/impl/func",
            "tools/thing/v2/tool.json",
        ],
        "{found:?}"
    );
    assert!(found[3].1.contains("at line 2 column 3"), "{found:?}");
    let run = env.run(&["bundle", "import", file.to_str().unwrap()]);
    run.failure(3);
    assert!(run.stderr.contains("4 problems"), "{run}");
    assert_eq!(run.stderr.matches("caused by: ").count(), 4, "{run}");
}

#[test]
fn a_tool_outside_its_folder_and_a_builtin_bundle_are_refused() {
    let env = TestEnv::new();
    let good = valid_files();

    // A tool whose folder does not match its slug.
    let mut files = good.clone();
    files[1].0 = "tools/other/v1/tool.json".to_owned();
    let err = refused(&env, &zip_files(&files), 3);
    assert_eq!(
        problems(&err),
        [(
            "tools/other/v1/tool.json#/slug".to_owned(),
            "slug 'thing' does not match its folder 'other'".to_owned()
        )]
    );

    // Two tools with one toolID.
    let mut files = good.clone();
    let copy = files[1].1.clone();
    let mut doc: Value = serde_json::from_slice(&copy).unwrap();
    doc["version"] = "v9".into();
    files.push((
        "tools/thing/v9/tool.json".to_owned(),
        serde_json::to_vec(&doc).unwrap(),
    ));
    let err = refused(&env, &zip_files(&files), 3);
    let mut found = problems(&err);
    found.sort();
    assert_eq!(
        found,
        [
            (
                "tools/thing/v1/tool.json#/toolID".to_owned(),
                format!(
                    "toolID {} is used also in tools/thing/v9/tool.json",
                    doc["toolID"].as_str().unwrap()
                )
            ),
            (
                "tools/thing/v9/tool.json#/toolID".to_owned(),
                format!(
                    "toolID {} is used also in tools/thing/v1/tool.json",
                    doc["toolID"].as_str().unwrap()
                )
            ),
        ]
    );

    // The built-in bundle is never imported.
    let mut files = good.clone();
    let mut bundle = file_doc(&files, "bundle.json");
    bundle["isBuiltIn"] = true.into();
    set_file(&mut files, "bundle.json", &bundle);
    let err = refused(&env, &zip_files(&files), 3);
    let found = problems(&err);
    assert_eq!(found[0].0, "bundle.json");
    assert!(found[0].1.contains("built-in bundle"), "{found:?}");
}

#[test]
fn a_leftover_staging_folder_breaks_nothing_and_is_cleaned_up() {
    let (env, _) = clock_catalog();
    let (file, _) = export(&env, "other", "other.zip");
    // What an import killed before its rename leaves: a hidden, half-written bundle folder.
    let leftover = env
        .catalog()
        .join("bundles/.import-0190a000-dead-7000-8000-000000000000");
    std::fs::create_dir_all(leftover.join("tools/thing/v1")).unwrap();
    std::fs::write(leftover.join("bundle.json"), "{ half").unwrap();
    std::fs::write(leftover.join("tools/thing/v1/tool.json"), "{}").unwrap();

    let list = env.tool_list(&["--include-disabled"]);
    assert_eq!(list.problems, [], "readers skip hidden folders");
    let bundles = env.bundle_list(&["--include-disabled", "--include-deleted"]);
    assert_eq!(bundles.problems, []);
    assert_eq!(bundles.items.len(), 3);
    let run = env.run(&["search", "thing"]);
    run.success();
    assert_eq!(run.stderr, "", "the index sync skips it too");
    env.run(&["index", "rebuild"]).success();
    assert_eq!(env.tool_list(&["--include-disabled"]).problems, []);

    // The next import (under the lock, where no import can be running) removes it.
    env.run(&["bundle", "import", &file, "--as-new", "--slug", "other2"])
        .success();
    assert!(!leftover.exists());
    assert_eq!(staging_leftovers(&env), Vec::<String>::new());
}

#[test]
fn import_waits_for_the_lock_and_racing_imports_give_one_winner() {
    let (source, id) = clock_catalog();
    let (file, _) = export(&source, "clock", "clock.zip");
    let target = TestEnv::new();

    // A held lock: LOCK_TIMEOUT, nothing written.
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(target.catalog().join(".toolctl/lock"))
        .unwrap();
    lock.lock().unwrap();
    let before = snapshot(target.catalog());
    let err = target.json_error(&["--lock-timeout", "200ms", "bundle", "import", &file], 8);
    assert_eq!(err.error.code, "LOCK_TIMEOUT");
    drop(lock);
    assert_eq!(snapshot(target.catalog()), before);

    // Four imports of one archive at once: one wins, the others are conflicts.
    let children: Vec<_> = (0..4)
        .map(|_| {
            target
                .command(&["--json", "bundle", "import", &file])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let codes: Vec<i32> = children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap().status.code().unwrap())
        .collect();
    let mut sorted = codes.clone();
    sorted.sort();
    assert_eq!(sorted, [0, 5, 5, 5], "{codes:?}");
    assert_eq!(
        snapshot(&target.bundle_dir(&id)),
        snapshot(&source.bundle_dir(&id))
    );
    assert_eq!(staging_leftovers(&target), Vec::<String>::new());
}

#[test]
fn import_refuses_what_validate_refuses() {
    let env = TestEnv::new();
    let good = valid_files();
    let tool = good[1].0.clone();
    let mut files = good.clone();
    let mut doc = file_doc(&files, &tool);
    doc["argSchema"] = json!({
        "type": "object",
        "properties": { "city": { "$ref": "https://schemas.example.com/city.json" } }
    });
    doc["createdAt"] = "2030-01-01T00:00:00Z".into();
    set_file(&mut files, &tool, &doc);
    let before = snapshot(env.catalog());
    let err = refused(&env, &zip_files(&files), 3);
    assert_eq!(
        problems(&err),
        [
            (
                "tools/thing/v1/tool.json#/argSchema/properties/city/$ref".to_owned(),
                "$ref 'https://schemas.example.com/city.json' points outside the schema; toolctl never fetches schemas: put the definition in $defs and use '#/$defs/…'".to_owned()
            ),
            (
                "tools/thing/v1/tool.json#/modifiedAt".to_owned(),
                // The message gives the instant (jiff's display: `.05Z` for a file's `.050Z`).
                format!(
                    "modifiedAt {} is before createdAt 2030-01-01T00:00:00Z",
                    doc["modifiedAt"]
                        .as_str()
                        .unwrap()
                        .parse::<jiff::Timestamp>()
                        .unwrap()
                )
            ),
        ]
    );
    assert_eq!(snapshot(env.catalog()), before, "nothing written");
}

#[test]
fn import_update_adds_the_versions_the_catalog_lacks() {
    let (source, id) = clock_catalog();
    let (old, _) = export(&source, "clock", "old.zip");
    let target = TestEnv::new();
    let old = input_file(&target, "old.zip", &std::fs::read(old).unwrap());
    target.run(&["bundle", "import", &old]).success();
    // The catalog's own switch is not content: disabling a version here is no conflict.
    target.run(&["tool", "disable", "clock/tick@v1"]).success();

    source.put_tool("clock", &tool_doc("tock", "v2"));
    let (new, bytes) = export(&source, "clock", "new.zip");
    let new = input_file(&target, "new.zip", &std::fs::read(new).unwrap());
    // Without --update a bundle the catalog holds is a conflict, as before.
    target.json_error(&["bundle", "import", &new], 5);

    let run = target.run(&["bundle", "import", "--update", &new]);
    run.success().stderr_has(
        "Updated bundle clock from [TMP]/inputs/new.zip: added 1 tool (tock@v2), 3 unchanged (tick@v1, tick@v2, tock@v1)"
            .replace("[TMP]", target.root().to_str().unwrap())
            .as_str(),
    );
    let archived = unzip(&bytes);
    let (_, tock_v2) = archived
        .iter()
        .find(|(n, _)| n == "tools/tock/v2/tool.json")
        .unwrap();
    assert_eq!(
        &std::fs::read(target.tool_file(&id, "tock", "v2")).unwrap(),
        tock_v2,
        "written byte for byte"
    );
    assert_eq!(
        target.json(&["tool", "get", "clock/tick@v1"])["isEnabled"],
        false
    );

    // Again: nothing to add.
    let again = target.json(&["bundle", "import", "--update", &new]);
    assert_eq!(again["added"], json!([]));
    assert_eq!(
        again["unchanged"],
        json!(["tick@v1", "tick@v2", "tock@v1", "tock@v2"])
    );
    assert_eq!(again["bundle"]["toolCount"], 4);

    // A version whose content changed is a conflict, and nothing is written.
    let file = source.tool_file(&id, "tick", "v2");
    let mut doc = crate::common::read_json(&file);
    doc["description"] = "changed after release".into();
    std::fs::write(&file, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    source.put_tool("clock", &tool_doc("tock", "v3"));
    let (changed, _) = export(&source, "clock", "changed.zip");
    let changed = input_file(&target, "changed.zip", &std::fs::read(changed).unwrap());
    let before = snapshot(target.catalog());
    let err = target.json_error(&["bundle", "import", "--update", &changed], 5);
    assert_eq!(err.error.code, "CONFLICT");
    assert_eq!(
        err.error.message,
        "cannot update bundle 'clock': tick@v2 differs from the catalog's clock/tick@v2: a version's content never changes"
    );
    assert_eq!(
        err.error.details["conflicts"][0]["entry"],
        "tools/tick/v2/tool.json"
    );
    assert_eq!(snapshot(target.catalog()), before);

    // A catalog without the bundle imports it whole; --update excludes --as-new.
    let fresh = TestEnv::new();
    let all = fresh.json(&["bundle", "import", "--update", &new]);
    assert_eq!(
        all["added"],
        json!(["tick@v1", "tick@v2", "tock@v1", "tock@v2"])
    );
    fresh
        .run(&["bundle", "import", "--update", "--as-new", &new])
        .failure(2);
}

/// `files` with one more tool: a copy of `tools/thing/v1` at `tools/<slug>/<version>`, with its
/// own toolID.
fn with_copy(files: &[(String, Vec<u8>)], slug: &str, version: &str) -> Vec<(String, Vec<u8>)> {
    let mut doc = file_doc(files, "tools/thing/v1/tool.json");
    doc["slug"] = slug.into();
    doc["version"] = version.into();
    doc["toolID"] = uuid::Uuid::now_v7().to_string().into();
    let mut files = files.to_vec();
    files.push((
        format!("tools/{slug}/{version}/tool.json"),
        serde_json::to_vec_pretty(&doc).unwrap(),
    ));
    files.sort();
    files
}

/// Slug or version folders that differ only by case are one folder on macOS and Windows, so
/// `bundle import` refuses them as `tool put` does (`CONFLICT`, the error naming both), before
/// anything is written: two inside one archive, and with `--update` one beside a folder the
/// bundle has.
#[test]
fn import_refuses_names_that_differ_only_by_case() {
    let good = valid_files();
    let tools_of = |env: &TestEnv, id: &str| env.bundle_dir(id).join("tools");
    let id = file_doc(&good, "bundle.json")["bundleID"]
        .as_str()
        .unwrap()
        .to_owned();
    // `together`: both are in the archive; else `other` is a folder of the catalog.
    let expect_twin = |err: &crate::common::ErrorDoc,
                       what: &str,
                       name: &str,
                       other: &str,
                       together: bool| {
        assert_eq!(err.error.code, "CONFLICT", "{err:?}");
        let (message, hint) = if together {
            (
                format!(
                    "the {what} '{name}' differs only by case from the {what} '{other}' written with it: on a case-insensitive file system (macOS, Windows) the two would be one folder (validate's rule case-collision)"
                ),
                format!("keep one of '{name}' and '{other}', or rename one in more than case"),
            )
        } else {
            (
                format!(
                    "the {what} '{name}' differs only by case from the {what} folder '{other}' beside it: on a case-insensitive file system (macOS, Windows) the two are one folder (validate's rule case-collision)"
                ),
                format!("choose a {what} that differs from '{other}' in more than case"),
            )
        };
        assert_eq!(err.error.message, message, "{err:?}");
        assert_eq!(err.error.details[what], name, "{err:?}");
        assert_eq!(err.error.hint.as_deref(), Some(hint.as_str()));
        err.error.details["path"].as_str().unwrap().to_owned()
    };

    // Twins inside one archive: a fresh import, plain, --update and --as-new, writes nothing.
    let env = TestEnv::new();
    env.bundle("mine");
    for (files, what, name, other, folder) in [
        (
            with_copy(&good, "Thing", "v1"),
            "slug",
            "thing",
            "Thing",
            "Thing",
        ),
        (
            with_copy(&good, "thing", "V1"),
            "version",
            "v1",
            "V1",
            "thing/V1",
        ),
    ] {
        let bytes = zip_files(&files);
        let err = refused(&env, &bytes, 5);
        let path = expect_twin(&err, what, name, other, true);
        assert_eq!(path, tools_of(&env, &id).join(folder).to_str().unwrap());
        let file = input_file(&env, "twins.zip", &bytes);
        for flag in ["--update", "--as-new"] {
            let before = snapshot(env.catalog());
            let err = env.json_error(&["bundle", "import", flag, &file], 5);
            expect_twin(&err, what, name, other, true);
            assert_eq!(snapshot(env.catalog()), before, "{flag}: nothing written");
            assert_eq!(staging_leftovers(&env), Vec::<String>::new());
        }
    }
    assert!(!env.bundle_dir(&id).exists());

    // --update of a bundle the catalog holds: a new slug or version beside one that differs
    // only by case is refused, the catalog unchanged; one that differs in more goes in.
    let env = TestEnv::new();
    let plain = input_file(&env, "plain.zip", &zip_files(&good));
    env.run(&["bundle", "import", &plain]).success();
    for (files, what, name, other) in [
        (with_copy(&good, "Thing", "v2"), "slug", "Thing", "thing"),
        (with_copy(&good, "thing", "V1"), "version", "V1", "v1"),
    ] {
        let file = input_file(&env, "update.zip", &zip_files(&files));
        let before = snapshot(env.catalog());
        let err = env.json_error(&["bundle", "import", "--update", &file], 5);
        let path = expect_twin(&err, what, name, other, false);
        let folder = if what == "slug" { "thing" } else { "thing/v1" };
        assert_eq!(path, tools_of(&env, &id).join(folder).to_str().unwrap());
        assert_eq!(snapshot(env.catalog()), before, "nothing written");
        env.run(&["bundle", "import", "--update", &file])
            .failure(5)
            .stderr_has(&format!("error: the {what} '{name}' differs only by case"));
    }
    let file = input_file(&env, "ok.zip", &zip_files(&with_copy(&good, "thing", "v2")));
    let done = env.json(&["bundle", "import", "--update", &file]);
    assert_eq!(done["added"], json!(["thing@v2"]), "{done}");
    assert_eq!(done["unchanged"], json!(["thing@v1"]), "{done}");
    let validated = env.run(&["validate"]);
    validated.success();
    assert!(!validated.stdout.contains("case-collision"), "{validated}");
}

/// Two tools of an archive whose exported names collide (`meteo` and `météo`) are refused as
/// `tool put` refuses the second of them: `CONFLICT` (exit 5), with its words, never
/// `VALIDATION_ERROR` saying how they "go out". Nothing is written.
#[test]
fn an_import_whose_tools_collide_is_a_conflict_in_tool_puts_words() {
    let mut files = valid_files();
    let thing = file_doc(&files, "tools/thing/v1/tool.json");
    for (slug, id) in [
        ("meteo", "01a213c6-3bf4-71bf-93b4-8d609d999e1f"),
        ("météo", "01a213c6-3bf4-71bf-93b4-8d609d999e2f"),
    ] {
        let mut doc = thing.clone();
        doc["slug"] = json!(slug);
        doc["toolID"] = json!(id);
        let name = format!("tools/{slug}/v1/tool.json");
        files.push((name.clone(), Vec::new()));
        set_file(&mut files, &name, &doc);
    }
    let env = TestEnv::new();
    let err = refused(&env, &zip_files(&files), 5);
    assert_eq!(err.error.code, "CONFLICT");
    let said = "other/meteo and other/météo would all want the exported name 'meteo' (validate's rule name-collision)";
    assert_eq!(err.error.message, said);

    // `tool put` of the same pair: the same code and words.
    let put = TestEnv::new();
    put.bundle("other");
    put.put_tool("other", &tool_doc("meteo", "v1"));
    let put_err = put.json_error(
        &[
            "tool",
            "put",
            "--bundle",
            "other",
            &put.input(&tool_doc("météo", "v1")),
        ],
        5,
    );
    assert_eq!(put_err.error.code, "CONFLICT");
    assert_eq!(put_err.error.message, said);
}
