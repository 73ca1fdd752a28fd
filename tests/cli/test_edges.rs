//! The small edges of the command line: did-you-mean, stdin everywhere a file
//! goes, `--color`, an empty `$TOOLCTL_CATALOG`, what is refused or asked at a terminal.

use crate::common::{Run, TestEnv, tool_doc, tool_doc_with};
use serde_json::json;
use std::process::Command;

/// Run `toolctl ARGS` with a terminal for stdin, stdout and stderr (util-linux `script`), with
/// `input` typed into it. Returns what the terminal showed.
fn in_terminal(env: &TestEnv, args: &[&str], input: &str) -> Run {
    in_terminal_after(env, "", args, input)
}

/// [`in_terminal`], with shell commands run in the terminal first (`stty cols 100; `).
pub(crate) fn in_terminal_after(env: &TestEnv, setup: &str, args: &[&str], input: &str) -> Run {
    let toolctl = env.command(args);
    let quote = |s: &str| format!("'{}'", s.replace('\'', r"'\''"));
    let line: Vec<String> = std::iter::once(toolctl.get_program())
        .chain(toolctl.get_args())
        .map(|a| quote(a.to_str().unwrap()))
        .collect();
    let mut script = Command::new("script");
    script
        .args(["-qec", &format!("{setup}{}", line.join(" ")), "/dev/null"])
        .env_clear()
        .current_dir(env.work());
    for (key, value) in toolctl.get_envs() {
        if let Some(value) = value {
            script.env(key, value);
        }
    }
    Run::of(script, Some(input))
}

#[test]
fn a_mistyped_tool_gets_the_closest_name() {
    let env = TestEnv::new();
    env.bundle("weather");
    env.put_tool("weather", &tool_doc("forecast", "v2"));
    let err = env.json_error(&["tool", "get", "forcast"], 4);
    assert_eq!(
        err.error.hint.as_deref().unwrap().lines().next(),
        Some("did you mean forecast?")
    );
    env.run(&["tool", "get", "weather/forcast@v2"])
        .failure(4)
        .stderr_has("hint: did you mean weather/forecast@v2?");
    env.run(&["invoke", "forcast"])
        .failure(4)
        .stderr_has("hint: did you mean forecast?");
    // Nothing close: no guess.
    let far = env.json_error(&["tool", "get", "zzzzzzzz"], 4);
    assert!(!far.error.hint.unwrap_or_default().contains("did you mean"));
}

#[test]
fn args_file_and_validate_read_standard_input() {
    let env = TestEnv::new();
    env.bundle("w");
    env.put_tool(
        "w",
        &tool_doc_with(
            "echo",
            "v1",
            json!({ "impl": { "func": "now" },
                    "argSchema": { "type": "object", "properties": { "tz": { "type": "string" } },
                                   "additionalProperties": false } }),
        ),
    );
    let ok = env.run_stdin(
        &["--json", "invoke", "w/echo", "--args-file", "-"],
        r#"{"tz":"UTC"}"#,
    );
    assert_eq!(ok.success().json()["ok"], true, "{ok}");
    let bad = env.run_stdin(
        &["--json", "invoke", "w/echo", "--args-file", "-"],
        r#"{"zone":1}"#,
    );
    bad.failure(3);

    // validate -: the document's fields say which file it is. A tool on standard input is
    // checked as `tool put -` reads it: a well-formed toolID may be left out, a broken one not.
    let mut tool = tool_doc("x", "v1");
    env.run_stdin(&["validate", "-"], &tool.to_string())
        .success();
    tool["toolID"] = json!("not-a-uuid");
    let run = env.run_stdin(&["--json", "validate", "-"], &tool.to_string());
    run.failure(3);
    let report = run.json();
    assert_eq!(report["files"], 1);
    let findings = report["findings"].as_array().unwrap();
    assert!(findings.iter().all(|f| f["file"] == "<stdin>"), "{report}");
    assert!(
        findings.iter().any(|f| f["pointer"] == "/toolID"),
        "checked as a tool.json: {report}"
    );
    let config = env.run_stdin(
        &["validate", "-"],
        r#"{"schemaVersion":"1","allowedHosts":[3]}"#,
    );
    config.failure(3).stdout_has("<stdin>:1:");
    assert!(config.stdout.contains("/allowedHosts/0"), "{config}");
    let clean = env.run_stdin(
        &["validate", "-"],
        r#"{"schemaVersion":"1","allowedHosts":["a.example"]}"#,
    );
    clean.success().stdout_has("1 file checked: no problems");
    env.run_stdin(&["validate", "-", "other.json"], "{}")
        .failure(2);
}

#[test]
fn an_empty_toolctl_catalog_is_named_as_the_variable() {
    let env = TestEnv::new();
    let run = Run::of(
        {
            let mut cmd = env.bare_command();
            cmd.env("TOOLCTL_CATALOG", "").args(["tool", "list"]);
            cmd
        },
        None,
    );
    run.failure(2)
        .stderr_has("error: $TOOLCTL_CATALOG is set but empty")
        .stderr_has("unset TOOLCTL_CATALOG");
    assert!(!run.stderr.contains("--catalog"), "{run}");
    // An empty flag is still the flag's error.
    let flag = Run::of(
        {
            let mut cmd = env.bare_command();
            cmd.env("TOOLCTL_CATALOG", "")
                .args(["--catalog=", "tool", "list"]);
            cmd
        },
        None,
    );
    flag.failure(2).stderr_has("'--catalog <DIR>'");
}

#[test]
fn color_follows_the_flag_over_no_color() {
    let env = TestEnv::new();
    // The test environment sets NO_COLOR and pipes stderr: auto means no color.
    let plain = env.run(&["tool", "get", "nothing"]);
    assert!(!plain.failure(4).stderr.contains('\u{1b}'), "{plain}");
    let always = env.run(&["--color", "always", "tool", "get", "nothing"]);
    assert!(always.failure(4).stderr.contains("\u{1b}["), "{always}");
    let never = in_terminal(&env, &["--color", "never", "tool", "get", "nothing"], "");
    assert!(!never.stdout.contains('\u{1b}'), "{never}");
    assert!(
        never.stdout.contains("error: tool 'nothing' not found"),
        "{never}"
    );
    env.run(&["--color", "sometimes", "tool", "list"])
        .failure(2);
}

#[test]
fn a_terminal_gets_no_archive_and_sees_what_it_approves() {
    let env = TestEnv::new();
    env.bundle("w");
    env.put_tool("w", &tool_doc("t", "v1"));
    let run = in_terminal(
        &env,
        &["--color", "never", "bundle", "export", "w", "-o", "-"],
        "",
    );
    assert_eq!(run.code(), 2, "{run}");
    assert!(run.stdout.contains("which is a terminal here"), "{run}");
    assert!(!run.stdout.contains("PK"), "no archive bytes: {run}");
    // Piped, the archive goes out.
    let piped = env
        .command(&["bundle", "export", "w", "-o", "-"])
        .output()
        .unwrap();
    assert!(piped.status.success());
    assert!(piped.stdout.starts_with(b"PK"));

    // The approval question shows the arguments it is about.
    env.put_tool(
        "w",
        &json!({ "slug": "asks", "version": "v1", "type": "native", "impl": { "func": "now" },
                 "allowNoSchema": true, "noSchemaMode": "human-approval" }),
    );
    let args = [
        "--color",
        "never",
        "invoke",
        "w/asks",
        "--args",
        r#"{"city":"Oslo"}"#,
    ];
    let refused = in_terminal(&env, &args, "n\n");
    assert_eq!(refused.code(), 6, "{refused}");
    assert!(
        refused.stdout.contains(
            "nothing has checked these arguments:\r\n  {\"city\":\"Oslo\"}\r\nRun it? [y/N]"
        ),
        "{refused}"
    );
    // Regression: a "no" (or Ctrl-D) was reported as if nobody had been asked ("needs a
    // person's approval … hint: run it on a terminal to be asked"). It says it was declined.
    for answer in ["n\n", "\u{4}"] {
        let declined = in_terminal(&env, &args, answer);
        assert_eq!(declined.code(), 6, "{declined}");
        assert!(
            declined
                .stdout
                .contains("error: w/asks@v1: the run was declined at the approval question"),
            "{declined}"
        );
        assert!(!declined.stdout.contains("on a terminal"), "{declined}");
        assert!(!declined.stdout.contains("needs a person"), "{declined}");
    }
    let approved = in_terminal(&env, &args, "y\n");
    assert_eq!(approved.code(), 0, "{approved}");
    assert!(approved.stdout.contains("\"utc\""), "{approved}");
}
