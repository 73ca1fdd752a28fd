//! The output contract: data on stdout, status and warnings on stderr (muted by `--quiet`),
//! one JSON document with `--json` (errors included), stable exit codes, no colour under
//! NO_COLOR, and a closed pipe is a clean exit.

use crate::common::{Run, TestEnv, ToolList, tool_doc, tool_doc_with, write_file};
use serde_json::json;
use std::io::{BufRead, BufReader};
use std::process::Stdio;

/// A catalog with `n` tools written straight to disk (fast: no process per tool).
fn big_catalog(n: usize) -> TestEnv {
    let env = TestEnv::new();
    let bundle_id = env.bundle("big");
    for i in 0..n {
        let slug = format!("tool-{i:04}");
        let doc = json!({
            "schemaVersion": "1",
            "toolID": uuid::Uuid::now_v7().to_string(),
            "bundleID": bundle_id,
            "slug": slug,
            "version": "v1",
            "description": "A tool that exists to make the list long enough to fill a pipe.",
            "type": "native",
            "impl": { "func": "now" },
            "argSchema": { "type": "object", "properties": {} },
            "createdAt": "2025-01-01T00:00:00Z",
            "modifiedAt": "2025-01-01T00:00:00Z"
        });
        write_file(
            &env.tool_file(&bundle_id, &slug, "v1"),
            &serde_json::to_string(&doc).unwrap(),
        );
    }
    env
}

/// Run `args`, read one line of stdout, close the pipe, and return how the process ended.
fn head_1(env: &TestEnv, args: &[&str]) -> Run {
    let mut child = env
        .command(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert!(!line.is_empty());
    drop(stdout);
    Run::from_output("toolctl … | head -1", child.wait_with_output().unwrap())
}

#[test]
fn a_closed_pipe_is_a_clean_exit() {
    let env = big_catalog(1000);
    // Read to the end, the list is whole.
    let list: ToolList = env.tool_list(&["--page-size", "1000", "--bundle", "big"]);
    assert_eq!(list.items.len(), 1000);
    assert_eq!(list.next_page_token, None);
    // Both outputs are far larger than a pipe's buffer, so the writes after `head` is gone
    // really fail with EPIPE.
    for args in [
        &["tool", "list", "--all"][..],
        &["--json", "tool", "list", "--all"][..],
    ] {
        let run = head_1(&env, args);
        assert_eq!(run.status, Some(0), "exit 0, not a panic or SIGPIPE\n{run}");
        assert_eq!(run.stderr, "", "no panic message, no error\n{run}");
    }

    // The reader gone before the first byte is written.
    let mut child = env
        .command(&["tool", "get", "builtin/now"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let run = Run::from_output(
        "toolctl tool get builtin/now >&-",
        child.wait_with_output().unwrap(),
    );
    assert_eq!(run.status, Some(0), "{run}");
    assert_eq!(run.stderr, "", "{run}");
}

#[test]
fn json_error_document_shape() {
    let env = TestEnv::new();
    let run = env.run(&["--json", "tool", "get", "nope"]);
    run.failure(4);
    assert_eq!(run.stderr, "", "with --json the error is on stdout only");
    // Exactly the documented shape, nothing more.
    let doc: crate::common::ErrorDoc = run.parse();
    assert!(!doc.ok);
    assert_eq!(doc.error.code, "NOT_FOUND");
    assert_eq!(doc.error.message, "tool 'nope' not found");
    assert_eq!(doc.error.details, json!({ "kind": "tool", "name": "nope" }));
    assert!(doc.error.hint.is_some());
    assert_eq!(crate::common::keys(&run.json()), ["ok", "error"]);

    // A validation error carries the file and the problems, with JSON pointers.
    let input = env.input(&tool_doc("a_b", "v1"));
    env.bundle("w");
    let err = env.json_error(&["tool", "put", "--bundle", "w", &input], 3);
    assert_eq!(err.error.code, "VALIDATION_ERROR");
    assert_eq!(err.error.details["file"], input.as_str());
    assert_eq!(err.error.details["problems"][0]["pointer"], "/slug");

    // A syntax error in the input names line and column.
    let bad = env.root().join("inputs/bad.json");
    std::fs::write(&bad, "{\n  \"slug\": \"x\",\n  oops\n}\n").unwrap();
    let err = env.json_error(&["tool", "put", "--bundle", "w", bad.to_str().unwrap()], 3);
    assert_eq!(err.error.details["line"], 3);
    assert!(err.error.details["column"].as_u64().unwrap() > 0);
}

#[test]
fn human_errors_go_to_stderr_with_a_hint() {
    let env = TestEnv::new();
    let run = env.run(&["tool", "get", "nope"]);
    run.failure(4);
    assert_eq!(run.stdout, "");
    insta::assert_snapshot!(run.stderr, @r"
    error: tool 'nope' not found
    hint: see the tools with `toolctl tool list --include-disabled`
    ");
}

#[test]
fn usage_errors_exit_2() {
    let env = TestEnv::new();
    for args in [
        &["tool", "frobnicate"][..],
        &["tool", "get"][..],
        &["tool", "list", "--page-size", "many"][..],
        &["--no-such-flag", "tool", "list"][..],
        &["bundle", "put"][..],
        &["bundle", "put", "--slug", "x", "--file", "f.json"][..],
    ] {
        let run = env.run(args);
        run.failure(2);
        assert_eq!(run.stdout, "", "{run}");
        run.stderr_has("error: ").stderr_has("--help");
    }
    // Under --json, a usage error is the JSON error document too, still exit 2.
    let run = env.run(&["--json", "tool", "frobnicate"]);
    run.failure(2);
    let doc: crate::common::ErrorDoc = run.parse();
    assert!(!doc.ok);
    assert!(doc.error.message.contains("frobnicate"));
    // The message names what is missing, not only that something is.
    let run = env.run(&["--json", "tool", "get"]);
    run.failure(2);
    let doc: crate::common::ErrorDoc = run.parse();
    assert_eq!(
        doc.error.message, "the following required arguments were not provided: <TOOL>",
        "{run}"
    );
    // Help and version are not errors.
    let run = env.run(&["--help"]);
    run.success();
    assert!(run.stdout.contains("Usage:"));
    let run = env.run(&["--version"]);
    run.success();
    assert_eq!(
        run.stdout,
        format!("toolctl {}\n", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn quiet_mutes_status_lines_but_not_errors_or_data() {
    let env = TestEnv::new();
    let run = env.run(&["bundle", "put", "--slug", "loud"]);
    run.success().stderr_has("Created bundle loud");
    let run = env.run(&["-q", "bundle", "put", "--slug", "hushed"]);
    run.success();
    assert_eq!((run.stdout.as_str(), run.stderr.as_str()), ("", ""));
    let run = env.run(&[
        "--quiet",
        "tool",
        "put",
        "--bundle",
        "hushed",
        &env.input(&tool_doc("t", "v1")),
    ]);
    run.success();
    assert_eq!((run.stdout.as_str(), run.stderr.as_str()), ("", ""));
    let run = env.run(&["-q", "tool", "disable", "hushed/t"]);
    run.success();
    assert_eq!(run.stderr, "");

    let run = env.run(&["-q", "tool", "list", "--include-disabled"]);
    run.success();
    assert!(run.stdout.contains("hushed/t@v1"));
    assert_eq!(run.stderr, "");

    let run = env.run(&["-q", "tool", "get", "nope"]);
    run.failure(4).stderr_has("error: tool 'nope' not found");
}

#[test]
fn every_command_prints_one_json_document() {
    let env = TestEnv::new();
    let input = env.input(&tool_doc("t", "v1"));
    for args in [
        &["init"][..],
        &["bundle", "put", "--slug", "w"][..],
        &["bundle", "get", "w"][..],
        &["bundle", "list"][..],
        &["bundle", "disable", "w"][..],
        &["bundle", "enable", "w"][..],
        &["tool", "put", "--bundle", "w", &input][..],
        &["tool", "get", "w/t"][..],
        &["tool", "list"][..],
        &["tool", "disable", "w/t@v1"][..],
        &["tool", "enable", "w/t@v1"][..],
        &["tool", "delete", "w/t@v1"][..],
        &["bundle", "delete", "w"][..],
        &["bundle", "restore", "w"][..],
        &["bundle", "reap"][..],
    ] {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        let run = env.run(&all);
        run.success();
        assert_eq!(
            run.stderr, "",
            "status lines stay off stderr in --json mode\n{run}"
        );
        assert!(run.json().is_object(), "{run}");
    }
}

#[test]
fn no_color_means_no_escape_codes() {
    let env = TestEnv::new();
    env.bundle("w");
    let bundle_id = env.json(&["bundle", "get", "w"])["bundleID"]
        .as_str()
        .unwrap()
        .to_owned();
    write_file(&env.tool_file(&bundle_id, "broken", "v1"), "{");
    for args in [
        &["tool", "get", "nope"][..],
        &["tool", "list"][..],
        &["bundle", "put", "--slug", "w"][..],
    ] {
        let run = env.run(args);
        assert!(!run.stdout.contains('\u{1b}'), "{run}");
        assert!(!run.stderr.contains('\u{1b}'), "{run}");
        assert!(!run.stderr.is_empty(), "{run}");
    }
}

#[test]
fn subcommand_summaries_say_what_each_does() {
    // `tool --help` lists one line per subcommand; get, enable, disable and delete do
    // different things and their summaries must say so (not all repeat the argument's doc).
    let env = TestEnv::new();
    for (group, subcommands) in [
        ("tool", &["get", "enable", "disable", "delete"][..]),
        (
            "bundle",
            &["get", "enable", "disable", "delete", "restore"][..],
        ),
    ] {
        let run = env.run(&[group, "--help"]);
        run.success();
        let mut summaries: Vec<String> = subcommands
            .iter()
            .map(|sub| {
                let line = run
                    .stdout
                    .lines()
                    .find(|l| l.trim_start().starts_with(&format!("{sub} ")))
                    .unwrap_or_else(|| panic!("no {sub} in {group} --help\n{run}"));
                line.trim_start()[sub.len()..].trim().to_owned()
            })
            .collect();
        let count = summaries.len();
        summaries.sort();
        summaries.dedup();
        assert_eq!(
            summaries.len(),
            count,
            "`{group} --help` gives several subcommands the same summary\n{}",
            run.stdout
        );
    }
}

/// Text from the catalog that a terminal would obey: clear the screen, set the window title
/// (OSC 0, ended by BEL), a hyperlink (OSC 8), a carriage return (a line that overwrites
/// itself), a C1 CSI, DEL, "conceal", and a right-to-left override and isolate (text shown
/// in another order than it is held: `gnp.exe` reads as `exe.png`).
const OBEYED: &str = "X\u{1b}[2J\u{1b}]0;pwned\u{7}\u{1b}]8;;https://evil.example/\u{1b}\\click\u{1b}]8;;\u{1b}\\\r\u{9b}2J\u{7f}\u{1b}[8mhidden\u{202e}gnp.exe\u{2067}";

/// How `OBEYED` is shown: each control character as a visible escape.
const SHOWN: &str = "X\\u001b[2J\\u001b]0;pwned\\u0007\\u001b]8;;https://evil.example/\\u001b\\click\\u001b]8;;\\u001b\\\\r\\u009b2J\\u007f\\u001b[8mhidden\\u202egnp.exe\\u2067";

/// Run `args` with stdout and stderr each on a terminal of its own (a pty, through
/// `tests/fixtures/terminal/pty_run.py`): the exit code and every byte written to each.
fn on_terminal(env: &TestEnv, args: &[&str]) -> (i32, Vec<u8>, Vec<u8>) {
    let toolctl = env.command(args);
    let dir = tempfile::tempdir().unwrap();
    let (out, err) = (dir.path().join("stdout"), dir.path().join("stderr"));
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/terminal/pty_run.py");
    let mut command = std::process::Command::new("python3");
    command
        .arg(script)
        .arg(&out)
        .arg(&err)
        .arg(toolctl.get_program())
        .args(toolctl.get_args())
        .env_clear()
        .current_dir(toolctl.get_current_dir().unwrap());
    for (name, value) in toolctl.get_envs() {
        if let Some(value) = value {
            command.env(name, value);
        }
    }
    let status = command.status().unwrap();
    (
        status.code().unwrap(),
        std::fs::read(&out).unwrap(),
        std::fs::read(&err).unwrap(),
    )
}

/// Where in `bytes` a control character other than newline and tab is (C0, DEL, or C1 in
/// UTF-8), with what surrounds it.
fn control_in(bytes: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(bytes);
    let at = text.find(|c: char| c.is_control() && c != '\n' && c != '\t')?;
    let from = text.floor_char_boundary(at.saturating_sub(30));
    let to = text.ceil_char_boundary((at + 30).min(text.len()));
    Some(format!("{:?}", &text[from..to]))
}

/// Regression: a tool's description, display name, tags and argument names, a
/// bundle's name and a file's unreadable value reached the terminal raw in `tool list`,
/// `search`, `tool get`, `bundle get` and `validate` (human and github), so a pull request's
/// tool.json could clear a developer's screen, set the terminal's title, hide a line behind a
/// carriage return or a link behind other text. Each control character other than newline
/// and tab is shown as a visible escape, on stdout and stderr alike, and toolctl's own colours
/// still work.
#[test]
fn control_characters_from_the_catalog_never_reach_a_terminal() {
    let env = TestEnv::new();
    env.run(&[
        "bundle",
        "put",
        "--slug",
        "b",
        "--display-name",
        &format!("Bundle {OBEYED}"),
    ])
    .success();
    let city = format!("city{OBEYED}");
    env.put_tool(
        "b",
        &tool_doc_with(
            "evil",
            "v1",
            json!({
                "displayName": format!("Evil {OBEYED}"),
                "description": format!("Weather {OBEYED}"),
                "tags": [format!("t{OBEYED}")],
                "argSchema": { "type": "object", "properties": { city: { "type": "string" } } }
            }),
        ),
    );
    // A file toolctl cannot read: the value serde quotes in its error goes to stderr.
    env.put_tool_by_hand(
        "b",
        &json!({ "slug": "broken", "version": "v1", "type": format!("nat{OBEYED}") }),
    );
    let runs: [&[&str]; 7] = [
        &["tool", "list"],
        &["search", "weather"],
        &["tool", "get", "b/evil"],
        &["tool", "get", "b/broken"],
        &["bundle", "get", "b"],
        &["validate"],
        &["validate", "--format", "github"],
    ];
    for args in runs {
        let (code, stdout, stderr) = on_terminal(&env, args);
        let both = format!(
            "{args:?} exit {code}\nstdout: {}\nstderr: {}",
            String::from_utf8_lossy(&stdout),
            String::from_utf8_lossy(&stderr)
        );
        assert_eq!(control_in(&stdout), None, "{both}");
        assert_eq!(control_in(&stderr), None, "{both}");
        // Shown, not dropped (the github format writes a carriage return `%0D`, as GitHub's
        // toolkit does).
        let shown = [stdout, stderr].concat();
        let shown = String::from_utf8_lossy(&shown);
        let github = SHOWN.replace("\\r", "%0D");
        assert!(shown.contains(SHOWN) || shown.contains(&github), "{both}");
    }

    // toolctl's own colours still reach the terminal, and nothing else does.
    let (_, stdout, stderr) = on_terminal(&env, &["--color", "always", "validate"]);
    let stdout = String::from_utf8(stdout).unwrap();
    assert!(
        stdout.contains("\u{1b}[1m\u{1b}[31merror[schema]\u{1b}[0m"),
        "{stdout:?}"
    );
    assert!(
        stdout.contains("\u{1b}[1m\u{1b}[33mwarning[description]\u{1b}[0m"),
        "{stdout:?}"
    );
    let own = ["\u{1b}[1m\u{1b}[31m", "\u{1b}[1m\u{1b}[33m", "\u{1b}[0m"];
    let rest = own
        .iter()
        .fold(stdout.clone(), |text, own| text.replace(own, ""));
    assert_eq!(control_in(rest.as_bytes()), None, "{stdout:?}");
    assert_eq!(control_in(&stderr), None);
    let (_, _, stderr) = on_terminal(&env, &["--color", "always", "tool", "get", "b/broken"]);
    let stderr = String::from_utf8(stderr).unwrap();
    assert!(
        stderr.starts_with("\u{1b}[1m\u{1b}[31merror:\u{1b}[0m "),
        "{stderr:?}"
    );
    let own = ["\u{1b}[1m\u{1b}[31m", "\u{1b}[1m\u{1b}[36m", "\u{1b}[0m"];
    let rest = own
        .iter()
        .fold(stderr.clone(), |text, own| text.replace(own, ""));
    assert_eq!(control_in(rest.as_bytes()), None, "{stderr:?}");
}
