//! README promises no other test holds, so that every promise in the README has a test that
//! fails when it breaks. Each test names the README sentence it holds.

use crate::common::{Run, TestEnv, find_prefixed, read_json, tool_doc, write_file};
use serde_json::{Value, json};
use std::fs::OpenOptions;
use std::time::{Duration, Instant};

/// README, Concurrency: "Readers take no lock." While another process holds the catalog lock,
/// every read answers at once (with `--lock-timeout 0s` a command that wanted it would fail
/// with exit 8), and sees the files as they are.
#[test]
fn readers_take_no_lock() {
    let env = TestEnv::new();
    env.bundle("w");
    env.put_tool("w", &tool_doc("t", "v1"));
    let edited = env.put_tool_by_hand("w", &tool_doc("edited", "v1"));
    let _lock = env.hold_lock();
    // A hand edit while the lock is held: the reads still see it (they sync the index).
    let mut doc = read_json(&edited);
    doc["description"] = json!("Counts zebras.");
    write_file(&edited, &serde_json::to_string_pretty(&doc).unwrap());
    let reads: [&[&str]; 8] = [
        &["tool", "list"],
        &["tool", "get", "w/t"],
        &["bundle", "list"],
        &["search", "zebras"],
        &["export", "--provider", "openai"],
        &["pick", "zebras"],
        &["index", "status"],
        &["validate"],
    ];
    for args in reads {
        let mut all = vec!["--lock-timeout", "0s", "--json"];
        all.extend_from_slice(args);
        let started = Instant::now();
        let run = env.run(&all);
        run.success();
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{args:?} waited {:?}",
            started.elapsed()
        );
    }
    let found = env.json(&["search", "zebras"]);
    assert_eq!(found["items"][0]["ref"], "w/edited@v1", "{found}");
    // The lock is real: a write under it fails at once.
    env.run(&["--lock-timeout", "0s", "tool", "disable", "w/t"])
        .failure(8);
}

/// The candidates of `toolctl --catalog CATALOG WORDS…` (clap's dynamic completion, as fish
/// asks for them).
fn complete(env: &TestEnv, words: &[&str], vars: &[(&str, &str)]) -> Run {
    let catalog = env.catalog().display().to_string();
    let mut cmd = env.bare_command();
    cmd.env("COMPLETE", "fish")
        .arg("--")
        .args(["toolctl", "--catalog", &catalog])
        .args(words);
    for (name, value) in vars {
        cmd.env(name, value);
    }
    Run::of(cmd, None)
}

/// README, Completions: "Completing only reads folder names and `bundle.json` files: it takes
/// no lock, touches no index, starts no watcher."
#[test]
fn completing_takes_no_lock_touches_no_index_and_starts_no_watcher() {
    let env = TestEnv::fixture();
    let state = env.catalog().join(".toolctl");
    assert!(!state.exists(), "the fixture has no derived state");
    // Even with the watcher mode that starts one whatever the terminal.
    let run = complete(
        &env,
        &["invoke", "weather/"],
        &[("TOOLCTL_WATCH", "always")],
    );
    run.success();
    assert!(run.stdout.contains("weather/forecast"), "{run}");
    assert!(
        !state.exists(),
        "completion made derived state: {:?}",
        find_prefixed(&state, "")
    );

    // With the lock held by another process, it answers at once.
    let _lock = env.hold_lock();
    let started = Instant::now();
    let run = complete(&env, &["tool", "get", "weather/for"], &[]);
    run.success();
    assert!(run.stdout.contains("weather/forecast"), "{run}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "waited {:?}",
        started.elapsed()
    );
    let left: Vec<String> = std::fs::read_dir(&state)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["lock"], "only the test's lock file");
}

/// README, Bundles as ZIP archives: "A soft-deleted bundle exports and imports as
/// soft-deleted."
#[test]
fn a_soft_deleted_bundle_exports_and_imports_as_soft_deleted() {
    let source = TestEnv::new();
    let id = source.bundle("gone");
    source.put_tool("gone", &tool_doc("t", "v1"));
    source.run(&["bundle", "delete", "gone"]).success();
    let deleted_at = source.json(&["bundle", "get", "gone"])["softDeletedAt"].clone();
    assert!(deleted_at.is_string(), "{deleted_at}");
    let archive = source.root().join("inputs/gone.zip");
    let archive = archive.to_str().unwrap();
    source
        .run(&["bundle", "export", "gone", "-o", archive])
        .success();

    let target = TestEnv::new();
    target.run(&["bundle", "import", archive]).success();
    let bundle = target.json(&["bundle", "get", &id]);
    assert_eq!(bundle["softDeletedAt"], deleted_at, "{bundle}");
    // Soft-deleted there too: its tools are hidden unless asked for, and it can be restored.
    assert_eq!(target.refs(&["--bundle", "gone"]), Vec::<String>::new());
    assert_eq!(
        target.refs(&["--include-deleted", "--bundle", "gone"]),
        ["gone/t@v1"]
    );
    target.run(&["bundle", "restore", "gone"]).success();
    assert_eq!(target.refs(&["--bundle", "gone"]), ["gone/t@v1"]);
}

/// README, Bundles as ZIP archives: "… and an archive file of at most 288 MiB." A sparse file
/// of 289 MiB costs no disk; it is refused by its size, before a byte of it is read.
#[test]
fn an_archive_file_over_288_mib_is_refused_by_its_size() {
    let env = TestEnv::new();
    let path = env.root().join("inputs/huge.zip");
    let file = std::fs::File::create(&path).unwrap();
    file.set_len(289 * 1024 * 1024).unwrap();
    drop(file);
    let listing = || {
        let mut all = find_prefixed(env.catalog(), "");
        all.sort();
        all
    };
    let before = listing();
    let started = Instant::now();
    let err = env.json_error(&["bundle", "import", path.to_str().unwrap()], 3);
    assert_eq!(err.error.code, "VALIDATION_ERROR", "{err:?}");
    assert!(err.error.message.contains("288 MiB"), "{err:?}");
    assert!(err.error.message.contains("huge.zip"), "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(listing(), before);
    // Exactly 288 MiB is read (and refused for what it holds, not its size).
    let file = OpenOptions::new().write(true).open(&path).unwrap();
    file.set_len(288 * 1024 * 1024).unwrap();
    drop(file);
    let err = env.json_error(&["bundle", "import", path.to_str().unwrap()], 3);
    assert!(!err.error.message.contains("288 MiB"), "{err:?}");
}

/// README, Invoke (`exec`): "`argv` runs without a shell, in `cwd` inside the workspace, stdin
/// closed, environment reduced to `PATH`, `HOME`, `USER`, `LANG`, `LC_ALL`, `LC_CTYPE`, `TZ`,
/// `TMPDIR` (plus `TOOLCTL_EXEC_TAG`, a tag of the call)".
#[test]
fn exec_gets_a_closed_stdin_and_only_the_listed_variables() {
    let env = TestEnv::new();
    env.run(&["tool", "enable", "builtin/exec"]).success();
    let args = json!({ "argv": ["sh", "-c", "cat; echo \"cat=$?\"; env"] });
    let mut cmd = env.command(&["--json", "invoke", "exec", "--args", &args.to_string()]);
    for (name, value) in [
        ("HOME", "/home/me"),
        ("USER", "me"),
        ("LANG", "C.UTF-8"),
        ("LC_ALL", "C.UTF-8"),
        ("LC_CTYPE", "C.UTF-8"),
        ("TZ", "UTC"),
        ("TMPDIR", "/tmp"),
        ("LC_MESSAGES", "C"),
        ("SHELL", "/bin/sh"),
        ("EDITOR", "vi"),
        ("TOOLCTL_CATALOG", "/somewhere"),
    ] {
        cmd.env(name, value);
    }
    // toolctl's own stdin holds text: the program must not read it.
    let run = Run::of(cmd, Some("LEAKED FROM STDIN\n"));
    run.success();
    let value = &run.json()["value"];
    let stdout = value["stdout"].as_str().unwrap();
    assert!(!stdout.contains("LEAKED"), "{stdout}");
    assert!(stdout.starts_with("cat=0\n"), "{stdout}");
    let mut names: Vec<&str> = stdout
        .lines()
        .skip(1)
        .filter_map(|line| line.split_once('=').map(|(name, _)| name))
        // The shell itself sets these.
        .filter(|name| !["PWD", "SHLVL", "_", "OLDPWD"].contains(name))
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "HOME",
            "LANG",
            "LC_ALL",
            "LC_CTYPE",
            "PATH",
            "TMPDIR",
            "TOOLCTL_EXEC_TAG",
            "TZ",
            "USER"
        ],
        "{stdout}"
    );
    let tag = stdout
        .lines()
        .find_map(|l| l.strip_prefix("TOOLCTL_EXEC_TAG="))
        .unwrap();
    assert!(!tag.is_empty());
    // A tag of the call: the next call gets another.
    let run = Run::of(
        env.command(&["--json", "invoke", "exec", "--args", &args.to_string()]),
        None,
    );
    let again = run.json()["value"]["stdout"].as_str().unwrap().to_owned();
    assert!(
        !again.contains(&format!("TOOLCTL_EXEC_TAG={tag}\n")),
        "{again}"
    );
}

/// README, Invoke (built-ins): `file-search` "stops after 100,000 entries with `truncated`".
/// 100,001 empty files in the workspace; the only match sorts last, past the limit.
#[test]
fn file_search_stops_after_100000_entries_and_says_truncated() {
    let env = TestEnv::new();
    let wide = env.work().join("wide");
    std::fs::create_dir_all(&wide).unwrap();
    for i in 0..100_000 {
        std::fs::File::create(wide.join(format!("f{i:06}"))).unwrap();
    }
    std::fs::File::create(wide.join("zz-target")).unwrap();
    let search = || {
        env.run(&[
            "--json",
            "invoke",
            "file-search",
            "--workspace",
            wide.to_str().unwrap(),
            "--args",
            r#"{"query":"zz-target"}"#,
        ])
    };
    let run = search();
    run.success();
    assert_eq!(
        run.json()["value"],
        json!({ "results": [], "truncated": true }),
        "{run}"
    );
    // One entry fewer, 100,000 in all, and the walk is complete.
    std::fs::remove_file(wide.join("f000000")).unwrap();
    let run = search();
    assert_eq!(
        run.json()["value"],
        json!({ "results": [{ "path": "zz-target", "type": "file" }], "truncated": false }),
        "{run}"
    );
}

/// README, The catalog on disk: "Files toolctl writes are pretty-printed JSON. Every rewrite
/// edits the document as read, so unknown fields, key order … and every number, as written":
/// here the extremes of 64-bit integers and of doubles (`test_numbers` has integers past 64
/// bits and other forms of numbers).
#[test]
fn numbers_keep_their_value_through_put_and_rewrites() {
    let env = TestEnv::new();
    let id = env.bundle("w");
    let numbers = [
        ("u64max", "18446744073709551615"),
        ("i64min", "-9223372036854775808"),
        ("above2p53", "9007199254740993"),
        ("tenth", "0.30000000000000004"),
        ("tiny", "5e-324"),
        ("huge", "1.7976931348623157e+308"),
        ("negzero", "-0.0"),
    ];
    let fields: Vec<String> = numbers
        .iter()
        .map(|(k, v)| format!("\"x-{k}\": {v}"))
        .collect();
    let text = format!(
        "{{\"slug\": \"n\", \"version\": \"v1\", \"type\": \"native\", \"impl\": {{\"func\": \"now\"}},\n\
         \"argSchema\": {{\"type\": \"object\", \"properties\": {{}}}}, {}}}",
        fields.join(", ")
    );
    let input = env.root().join("inputs/numbers.json");
    write_file(&input, &text);
    env.run(&["tool", "put", "--bundle", "w", input.to_str().unwrap()])
        .success();
    let file = env.tool_file(&id, "n", "v1");
    let check = |stage: &str| {
        let stored = std::fs::read_to_string(&file).unwrap();
        // Pretty-printed: one field a line, two spaces a level.
        assert!(stored.starts_with("{\n  \""), "{stage}: {stored}");
        for (key, value) in numbers {
            assert!(
                stored.contains(&format!("\"x-{key}\": {value}")),
                "{stage}: x-{key} is not {value}:\n{stored}"
            );
        }
        let doc = read_json(&file);
        assert_eq!(doc["x-u64max"], json!(u64::MAX));
        assert_eq!(doc["x-i64min"], json!(i64::MIN));
    };
    check("put");
    env.run(&["tool", "disable", "w/n"]).success();
    check("disable");
    env.run(&["tool", "enable", "w/n"]).success();
    check("enable");
    let got: Value = env.json(&["tool", "get", "w/n"])["document"].clone();
    assert_eq!(got["x-above2p53"], json!(9_007_199_254_740_993_u64));
}

/// How many of [`more_echoed_forms`] are the secret alone (the rest are longer texts).
const WHOLE: usize = 6;

/// `secret` in the forms the README names beyond those `test_trust_invoke` sends: as HTML
/// character references (decimal, hex, named), JSON-escaped twice, and base64 — whole
/// (standard and URL-safe alphabets) and as part of a longer base64 text at each alignment.
fn more_echoed_forms(secret: &str) -> Vec<String> {
    use base64::Engine;
    use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
    // `\\u0073…`: each character `\uXXXX`-escaped, inside a JSON string escaped again.
    let twice: String = secret
        .encode_utf16()
        .map(|unit| format!("\\\\u{unit:04x}"))
        .collect();
    let mut forms = vec![
        secret.chars().map(|c| format!("&#{};", c as u32)).collect(),
        secret
            .chars()
            .map(|c| format!("&#x{:X};", c as u32))
            .collect(),
        secret.replace('&', "&amp;"),
        twice,
        STANDARD.encode(secret),
        URL_SAFE_NO_PAD.encode(secret),
    ];
    for prefix in ["", "a", "ab"] {
        // After the `WHOLE` forms of the secret alone.
        forms.push(STANDARD.encode(format!("{prefix}{secret}:and-more-after-it")));
    }
    forms
}

/// README, HTTP tools (Secrets): every secret value a call used "is replaced by `[redacted]`
/// in everything toolctl prints … in every form a server may echo it: as it is, JSON-escaped
/// (`\/`, `\uXXXX`, escaped twice), percent-encoded, as an HTML character reference, and base64
/// (whole, or as part of a longer base64 text …)". The server echoes each form in a JSON value,
/// in an error's body excerpt, and in a batch.
#[tokio::test(flavor = "multi_thread")]
async fn a_secret_echoed_as_html_twice_escaped_or_base64_never_shows() {
    use crate::test_invoke_http::World;
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, ResponseTemplate};
    const SECRET: &str = "sk-Live/Zq9+é=&x<y>";
    let w = World::new().await;
    let forms = more_echoed_forms(SECRET);
    Mock::given(method("GET"))
        .and(path("/value"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({ "echo": forms })))
        .mount(&w.server)
        .await;
    Mock::given(method("GET"))
        .and(path("/error"))
        .respond_with(ResponseTemplate::new(500).set_body_raw(forms.join(" "), "text/plain"))
        .mount(&w.server)
        .await;
    for (slug, at) in [("value", "/value"), ("error", "/error")] {
        w.tool_with(
            slug,
            json!({ "urlTemplate": w.url(at), "headers": { "X-Token": "${TOKEN}" } }),
            json!({ "secrets": ["TOKEN"], "maxRetries": 0 }),
        );
    }
    let batch = json!({ "calls": [
        { "call_id": "a", "name": "h/value", "arguments": {} },
        { "call_id": "b", "name": "h/error", "arguments": {} },
    ] });
    let mut runs = Vec::new();
    for args in [
        vec!["--json", "invoke", "h/value"],
        vec!["invoke", "h/value"],
        vec!["--json", "invoke", "h/error"],
        vec!["invoke", "h/error"],
        vec!["--json", "invoke", "--batch", "-"],
    ] {
        let mut cmd = w.env.command(&args);
        cmd.env("TOOLCTL_SECRET_TOKEN", SECRET);
        let stdin = args.contains(&"--batch").then(|| batch.to_string());
        runs.push(Run::of(cmd, stdin.as_deref()));
    }
    runs[0].success();
    let echoed = runs[0].json()["value"]["echo"].clone();
    for (i, form) in forms.iter().enumerate() {
        let shown = echoed[i].as_str().unwrap();
        assert!(shown.contains("[redacted]"), "{form} -> {shown}");
        if i < WHOLE {
            // (base64's `=` padding carries none of the secret)
            assert_eq!(
                shown.trim_end_matches('='),
                "[redacted]",
                "{form} is the secret alone"
            );
        }
    }
    for (n, run) in runs.iter().enumerate() {
        let text = format!("{}{}", run.stdout, run.stderr);
        // (The human error line does not show the body excerpt.)
        assert!(n == 3 || text.contains("[redacted]"), "{run}");
        for (i, form) in forms.iter().enumerate() {
            // Inside a longer base64 text, the characters the secret alone decides.
            let part = if i < WHOLE {
                form.clone()
            } else {
                let (prefix, bytes) = (i - WHOLE, SECRET.len());
                form[(prefix * 8).div_ceil(6)..(prefix + bytes) * 8 / 6].to_owned()
            };
            assert!(!text.contains(&part), "leaked as {part} (of {form})\n{run}");
        }
    }
}

/// README, Output: "On a terminal, list tables fit its width: references and other short
/// columns stay whole, the description is cut with `…`; piped, descriptions are not cut (a
/// status reason is, at 40 characters …)".
#[test]
fn list_tables_fit_a_terminal_and_keep_descriptions_whole_when_piped() {
    let env = TestEnv::fixture_with_legacy_tool();
    let listed = env.json(&["tool", "list", "--include-disabled"]);
    let items = listed["items"].as_array().unwrap();
    let long = items
        .iter()
        .filter(|t| t["description"].as_str().unwrap().chars().count() > 60)
        .count();
    assert!(long > 5, "the fixture has long descriptions");

    let shown = crate::test_edges::in_terminal_after(
        &env,
        "stty cols 100 rows 50; ",
        &["tool", "list", "--include-disabled"],
        "",
    );
    shown.success();
    let lines: Vec<&str> = shown
        .stdout
        .lines()
        .map(|l| l.trim_end_matches('\r'))
        .collect();
    assert_eq!(lines.len(), items.len() + 1, "one line a tool\n{shown}");
    for line in &lines {
        assert!(
            line.chars().count() <= 100,
            "wider than the terminal: {line}"
        );
    }
    for (line, item) in lines[1..].iter().zip(items) {
        let reference = item["ref"].as_str().unwrap();
        assert!(line.starts_with(&format!("{reference} ")), "{line}");
    }
    let cut = lines.iter().filter(|l| l.ends_with('…')).count();
    assert!(cut >= long, "long descriptions are cut with …\n{shown}");

    // Piped: every description whole, on its tool's line.
    let piped = env.run(&["tool", "list", "--include-disabled"]);
    piped.success();
    let lines: Vec<&str> = piped.stdout.lines().collect();
    for (line, item) in lines[1..].iter().zip(items) {
        let description = item["description"].as_str().unwrap();
        assert!(line.ends_with(description), "{line}\n  {description}");
    }
    // A status reason over 40 characters is the one cell cut.
    let unavailable = lines.iter().find(|l| l.contains("unavailable")).unwrap();
    assert!(
        unavailable.contains("unavailable: native function 'github.co… "),
        "{unavailable}"
    );
}

/// README, `bundle.json` and `tool.json`: "`argSchema` is required (a JSON Schema object)
/// unless `allowNoSchema: true` with a `noSchemaMode`" and "Header values must not contain CR
/// or LF": `tool put` refuses both (exit 3, the JSON pointer), and writes nothing.
#[test]
fn tool_put_refuses_a_missing_arg_schema_and_a_header_with_a_line_break() {
    let env = TestEnv::new();
    let id = env.bundle("w");
    env.edit_config(|c| c["allowedHosts"] = json!(["api.example.com"]));
    let mut bare = tool_doc("bare", "v1");
    bare.as_object_mut().unwrap().remove("argSchema");
    let header = |value: &str| {
        json!({ "slug": "hdr", "version": "v1", "type": "http", "argSchema": { "type": "object" },
                "impl": { "urlTemplate": "https://api.example.com/a", "headers": { "X-A": value } } })
    };
    for (doc, pointer) in [
        (bare.clone(), "/argSchema"),
        (header("a\r\nInjected: 1"), "/impl/headers/X-A"),
        (header("a\nb"), "/impl/headers/X-A"),
        (header("a\rb"), "/impl/headers/X-A"),
    ] {
        let input = env.input(&doc);
        let err = env.json_error(&["tool", "put", "--bundle", "w", &input], 3);
        assert_eq!(err.error.code, "VALIDATION_ERROR", "{err:?}");
        assert!(
            err.error.message.contains(pointer) || err.error.details.to_string().contains(pointer),
            "names {pointer}: {err:?}"
        );
    }
    assert!(!env.bundle_dir(&id).join("tools").exists());
    // With allowNoSchema and a mode the bare tool goes in.
    bare["allowNoSchema"] = json!(true);
    bare["noSchemaMode"] = json!("read-only");
    env.put_tool("w", &bare);
}

/// README, Invoke (built-ins): "`readfile` (… `max_bytes` default 64 KiB up to 1 MiB …);
/// `file-search` (… `max_results` default 50 up to 200 …)".
#[test]
fn builtin_defaults_and_bounds_are_the_documented_ones() {
    let env = TestEnv::new();
    write_file(&env.work().join("big.txt"), &"x".repeat(2 * 1024 * 1024));
    let read =
        |args: Value| env.run(&["--json", "invoke", "readfile", "--args", &args.to_string()]);
    let default = read(json!({ "path": "big.txt" })).json();
    assert_eq!(
        default["value"]["content_text"].as_str().unwrap().len(),
        64 * 1024
    );
    assert_eq!(default["value"]["truncated"], true);
    let most = read(json!({ "path": "big.txt", "max_bytes": 1024 * 1024 })).json();
    assert_eq!(
        most["value"]["content_text"].as_str().unwrap().len(),
        1024 * 1024
    );
    let over = read(json!({ "path": "big.txt", "max_bytes": 1024 * 1024 + 1 }));
    over.failure(3);
    assert_eq!(over.json()["error"]["code"], "VALIDATION_ERROR", "{over}");

    for i in 0..210 {
        std::fs::File::create(env.work().join(format!("f{i:03}.txt"))).unwrap();
    }
    let search = |args: Value| {
        env.run(&[
            "--json",
            "invoke",
            "file-search",
            "--args",
            &args.to_string(),
        ])
    };
    let default = search(json!({ "query": "*.txt" })).json();
    assert_eq!(default["value"]["results"].as_array().unwrap().len(), 50);
    assert_eq!(default["value"]["truncated"], true);
    let most = search(json!({ "query": "*.txt", "max_results": 200 })).json();
    assert_eq!(most["value"]["results"].as_array().unwrap().len(), 200);
    let over = search(json!({ "query": "*.txt", "max_results": 201 }));
    over.failure(3);
    assert_eq!(over.json()["error"]["code"], "VALIDATION_ERROR", "{over}");
}

/// README, Commands (Replacing a bundle): "`createdAt` is kept either way, and `modifiedAt`
/// moves only when slug, display name or description change."
#[test]
fn a_bundle_modified_at_moves_only_when_its_slug_display_name_or_description_change() {
    let env = TestEnv::new();
    let put = env.json(&["bundle", "put", "--slug", "w", "--description", "d"]);
    let id = put["bundleID"].as_str().unwrap().to_owned();
    let file = env.bundle_dir(&id).join("bundle.json");
    let stamp = || {
        let doc = read_json(&file);
        (doc["createdAt"].clone(), doc["modifiedAt"].clone())
    };
    let first = stamp();
    let unchanged: [&[&str]; 4] = [
        &[
            "bundle",
            "put",
            "--id",
            &id,
            "--slug",
            "w",
            "--description",
            "d",
        ],
        &["bundle", "put", "--id", &id, "--slug", "w", "--disabled"],
        &["bundle", "enable", "w"],
        &["bundle", "disable", "w"],
    ];
    for args in unchanged {
        std::thread::sleep(Duration::from_millis(5));
        env.run(args).success();
        assert_eq!(stamp(), first, "{args:?} moved modifiedAt");
    }
    // A whole file whose slug, display name and description are the same: an unknown field
    // and the enabled flag change, not modifiedAt.
    let same =
        env.input(&json!({ "bundleID": id, "slug": "w", "description": "d", "x-team": "maps" }));
    env.run(&["bundle", "put", "--file", &same]).success();
    assert_eq!(stamp(), first);
    assert_eq!(read_json(&file)["x-team"], "maps");

    let moved: [&[&str]; 3] = [
        &[
            "bundle",
            "put",
            "--id",
            &id,
            "--slug",
            "w",
            "--description",
            "new words",
        ],
        &[
            "bundle",
            "put",
            "--id",
            &id,
            "--slug",
            "w",
            "--display-name",
            "Dub",
        ],
        &["bundle", "put", "--id", &id, "--slug", "renamed"],
    ];
    let mut last = first.clone();
    for args in moved {
        std::thread::sleep(Duration::from_millis(5));
        env.run(args).success();
        let now = stamp();
        assert_eq!(now.0, first.0, "{args:?} changed createdAt");
        assert!(
            crate::common::timestamp(now.1.as_str().unwrap())
                > crate::common::timestamp(last.1.as_str().unwrap()),
            "{args:?} did not move modifiedAt"
        );
        last = now;
    }
}

/// README, MCP server: "`tools/call` runs the tool as `toolctl invoke` does … and a tool that
/// needs a person's approval is refused" (a `human-approval` tool without a terminal); a
/// `full` one beside it runs.
#[test]
fn mcp_serve_refuses_a_tool_that_needs_a_persons_approval() {
    use crate::test_mcp::drive;
    let env = TestEnv::new();
    env.bundle("w");
    for (slug, mode) in [("asks", "human-approval"), ("runs", "full")] {
        env.put_tool(
            "w",
            &json!({ "slug": slug, "version": "v1", "type": "native", "impl": { "func": "now" },
                     "description": "Tell the time.", "allowNoSchema": true, "noSchemaMode": mode }),
        );
    }
    let session = drive(
        &env,
        "legacy",
        &["--bundle", "w"],
        json!([
            {"op": "call", "name": "asks", "arguments": {}},
            {"op": "call", "name": "runs", "arguments": {}},
        ]),
    );
    let refused = session.step(0);
    assert_eq!(refused["isError"], true, "{refused}");
    assert_eq!(
        refused["structuredContent"]["error"]["code"], "FORBIDDEN",
        "{refused}"
    );
    let ran = session.step(1);
    assert_eq!(ran["isError"], false, "{ran}");
}

/// README, HTTP tools (Retries): "or the server's `Retry-After` …; each wait at most 10 s". A
/// server asking for an hour gets its retry after 10 s, inside the tool's `timeoutMs`.
#[tokio::test(flavor = "multi_thread")]
async fn a_retry_after_of_an_hour_waits_10_seconds() {
    use crate::test_invoke_http::World;
    use wiremock::matchers::method;
    use wiremock::{Mock, ResponseTemplate};
    let w = World::new().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(503).insert_header("Retry-After", "3600"))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&w.server)
        .await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!("later")))
        .with_priority(2)
        .mount(&w.server)
        .await;
    w.tool_with(
        "patient",
        json!({ "urlTemplate": w.url("/r"), "timeoutMs": 30_000 }),
        json!({ "maxRetries": 1 }),
    );
    let started = Instant::now();
    assert_eq!(w.value("patient", &json!({})), json!("later"));
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(9_500) && took < Duration::from_secs(20),
        "took {took:?}"
    );
    assert_eq!(w.requests().await.len(), 2);
}

/// README, HTTP tools (Auth, OAuth2): "The token URL's host must be in `allowedHosts`; no
/// redirect is followed there." A token endpoint that redirects, even to a path on the same
/// allowed host that would hand out a token, fails the call; the API is never called.
#[tokio::test(flavor = "multi_thread")]
async fn an_oauth2_token_url_that_redirects_is_not_followed() {
    use crate::test_invoke_http::World;
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, ResponseTemplate};
    let w = World::new().await;
    Mock::given(method("POST"))
        .and(path("/token"))
        .respond_with(ResponseTemplate::new(307).insert_header("Location", w.url("/real-token")))
        .mount(&w.server)
        .await;
    Mock::given(path("/real-token"))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            json!({ "access_token": "tok-123456789", "token_type": "Bearer", "expires_in": 3600 }),
        ))
        .mount(&w.server)
        .await;
    Mock::given(path("/api"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!("reached")))
        .mount(&w.server)
        .await;
    w.tool_with(
        "oauth",
        json!({ "urlTemplate": w.url("/api"),
                "auth": { "type": "oauth2-client-credentials", "tokenUrl": w.url("/token"),
                          "clientIdSecret": "CID", "clientSecretSecret": "CSECRET" } }),
        json!({ "secrets": ["CID", "CSECRET"], "maxRetries": 0 }),
    );
    let mut cmd = w.command("oauth", &json!({}));
    cmd.env("TOOLCTL_SECRET_CID", "the-client-id")
        .env("TOOLCTL_SECRET_CSECRET", "the-client-secret");
    let run = Run::of(cmd, None);
    assert_eq!(run.code(), 7, "{run}");
    assert_eq!(run.json()["error"]["code"], "UPSTREAM_ERROR", "{run}");
    assert!(
        run.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("307"),
        "{run}"
    );
    let paths: Vec<String> = w
        .requests()
        .await
        .iter()
        .map(|r| r.url.path().to_owned())
        .collect();
    assert_eq!(paths, ["/token"], "followed the redirect or called the API");
}

/// docs/JSON.md rule 7: "Field names are camelCase, IDs `toolID`/`bundleID`, times RFC 3339
/// UTC, durations in milliseconds under a name ending in `Ms` (or seconds in `…Secs`)" — in
/// toolctl's own documents (not in a tool's own document, a call's value, or the shapes of
/// rule 6 and the attach contract).
#[test]
fn json_field_names_are_camel_case_with_rfc3339_times_and_unit_suffixes() {
    let env = TestEnv::fixture();
    let runs: [&[&str]; 17] = [
        &["tool", "get", "weather/forecast"],
        &["bundle", "get", "weather"],
        &["index", "status"],
        &["search", "weather"],
        &["pick", "weather", "--debug"],
        &["tool", "list"],
        &["bundle", "list", "--include-deleted"],
        &["validate"],
        &["invoke", "now"],
        &["bundle", "reap", "--dry-run"],
        &["config", "get"],
        &["bundle", "put", "--slug", "fresh"],
        &["tool", "new", "fresh", "probe"],
        &["tool", "enable", "fresh/probe"],
        &["tool", "delete", "fresh/probe"],
        &["bundle", "delete", "fresh"],
        &["tool", "get", "no/such"],
    ];
    // Inside these, the names are someone else's.
    const FOREIGN: [&str; 6] = [
        "document",
        "argSchema",
        "outputSchema",
        "annotations",
        "value",
        "details",
    ];
    let camel = regex::Regex::new("^[a-z][a-zA-Z0-9]*$").unwrap();
    fn walk(v: &Value, at: &str, seen: &mut Vec<(String, Value)>) {
        match v {
            Value::Object(map) => {
                for (key, value) in map {
                    seen.push((format!("{at}/{key}"), value.clone()));
                    if !FOREIGN.contains(&key.as_str()) {
                        walk(value, &format!("{at}/{key}"), seen);
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|x| walk(x, &format!("{at}/*"), seen)),
            _ => {}
        }
    }
    let mut checked = 0;
    for args in runs {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        let run = env.run(&all);
        let mut seen = Vec::new();
        walk(&run.json(), "", &mut seen);
        for (path, value) in seen {
            let key = path.rsplit('/').next().unwrap();
            checked += 1;
            assert!(camel.is_match(key), "{args:?}: {path} is not camelCase");
            assert!(!key.ends_with("Id"), "{args:?}: {path}: IDs are spelled ID");
            if key.ends_with("At") && !value.is_null() {
                let text = value.as_str().unwrap_or_default();
                assert!(
                    text.ends_with('Z') && text.parse::<jiff::Timestamp>().is_ok(),
                    "{args:?}: {path} = {value} is not an RFC 3339 UTC time"
                );
            }
            if key.ends_with("Ms") || key.ends_with("Secs") {
                assert!(value.is_u64(), "{args:?}: {path} = {value} is not a count");
            }
        }
    }
    assert!(checked > 200, "checked {checked} fields");
}

/// README, Concurrency: "A lock not had within `--lock-timeout` (default 10 s) is
/// `LOCK_TIMEOUT`" — the default, without the flag.
#[test]
fn the_lock_timeout_is_10_seconds_by_default() {
    let env = TestEnv::new();
    env.bundle("w");
    let input = env.input(&tool_doc("t", "v1"));
    let _lock = env.hold_lock();
    let started = Instant::now();
    let err = env.json_error(&["tool", "put", "--bundle", "w", &input], 8);
    let waited = started.elapsed();
    assert_eq!(err.error.code, "LOCK_TIMEOUT", "{err:?}");
    assert!(err.error.message.contains("within 10 s"), "{err:?}");
    assert!(
        waited >= Duration::from_secs(10) && waited < Duration::from_secs(20),
        "waited {waited:?}"
    );
}

/// README, Invoke (`exec`): "after `timeout_ms` (default 10 s) it is killed".
#[test]
fn exec_is_stopped_after_10_seconds_by_default() {
    let env = TestEnv::new();
    env.run(&["tool", "enable", "builtin/exec"]).success();
    let started = Instant::now();
    let run = env.run(&[
        "--json",
        "invoke",
        "exec",
        "--args",
        r#"{"argv":["sleep","60"]}"#,
    ]);
    let took = started.elapsed();
    run.success();
    assert_eq!(run.json()["value"]["timed_out"], true, "{run}");
    assert!(
        took >= Duration::from_secs(10) && took < Duration::from_secs(20),
        "took {took:?}"
    );
}

/// README, Batches: "`wait_ms` 100–60000, default 15000 … a call still running at `wait_ms` is
/// `TIMEOUT` and is stopped" — the default, with no `wait_ms` in the request.
#[test]
fn a_batch_waits_15_seconds_by_default() {
    let env = TestEnv::new();
    env.run(&["tool", "enable", "builtin/exec"]).success();
    let batch = json!({ "calls": [{ "call_id": "slow", "name": "exec",
        "arguments": { "argv": ["sleep", "60"], "timeout_ms": 60_000 } }] });
    let started = Instant::now();
    let run = env.run_stdin(&["--json", "invoke", "--batch", "-"], &batch.to_string());
    let took = started.elapsed();
    run.success();
    let result = &run.json()["results"][0];
    assert_eq!(result["error"]["code"], "TIMEOUT", "{run}");
    assert!(
        took >= Duration::from_secs(15) && took < Duration::from_secs(25),
        "took {took:?}"
    );
}
