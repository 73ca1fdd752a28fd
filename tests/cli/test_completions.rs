//! Shell completion: the binary answers `COMPLETE=SHELL toolctl -- WORDS…` (clap_complete's
//! dynamic completion) with the values of closed sets and with the tools, bundles, agents and
//! MCP servers of the catalog the words name, without writing anything; the committed scripts
//! drive it from a real bash.

use crate::common::{TestEnv, bin, write_file};
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// The values `toolctl` offers for the last of `words` (the word being typed), asked as fish
/// asks (one `value\thelp` line each), with `--catalog` among the words.
fn complete(env: &TestEnv, words: &[&str]) -> Vec<String> {
    let catalog = env.catalog().display().to_string();
    let mut all = vec!["toolctl", "--catalog", &catalog];
    all.extend_from_slice(words);
    complete_raw(env, &all, &[])
}

/// The candidates for `words` as given (no `--catalog` added), with extra variables set.
fn complete_raw(env: &TestEnv, words: &[&str], vars: &[(&str, &str)]) -> Vec<String> {
    let mut cmd = env.bare_command();
    cmd.env("COMPLETE", "fish").arg("--").args(words);
    for (name, value) in vars {
        cmd.env(name, value);
    }
    let run = crate::common::Run::of(cmd, None);
    run.success();
    assert_eq!(run.stderr, "", "completion is quiet\n{run}");
    // With nothing typed, clap offers the flags too: keep the values.
    run.stdout
        .lines()
        .map(|line| line.split('\t').next().unwrap().to_owned())
        .filter(|value| !value.starts_with("--"))
        .collect()
}

/// Every file and folder under `dir` with its size, to see that nothing was written.
fn tree(dir: &Path) -> BTreeSet<(String, u64)> {
    let mut out = BTreeSet::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let entry = entry.unwrap();
            let meta = entry.metadata().unwrap();
            let rel = entry
                .path()
                .strip_prefix(dir)
                .unwrap()
                .display()
                .to_string();
            if meta.is_dir() {
                stack.push(entry.path());
                out.insert((rel, 0));
            } else {
                out.insert((rel, meta.len()));
            }
        }
    }
    out
}

#[test]
fn tool_references_complete_from_the_catalog() {
    let env = TestEnv::fixture();
    let before = tree(env.catalog());
    // Nothing typed: the bundles, each ready for its slugs.
    let bundles = complete(&env, &["tool", "get", ""]);
    for bundle in ["builtin/", "weather/", "github/", "finance/"] {
        assert!(bundles.contains(&bundle.to_owned()), "{bundles:?}");
    }
    // A bundle and the start of a slug.
    assert_eq!(
        complete(&env, &["invoke", "weather/fo"]),
        ["weather/forecast"]
    );
    // The versions, after the bundle or after a bare slug.
    assert_eq!(
        complete(&env, &["tool", "enable", "weather/forecast@"]),
        [
            "weather/forecast@v1",
            "weather/forecast@v2",
            "weather/forecast@v2.1"
        ]
    );
    assert_eq!(
        complete(&env, &["tool", "get", "forecast@v2"]),
        ["forecast@v2", "forecast@v2.1"]
    );
    // A bare slug, as the command line takes it, and the bundles it could start.
    assert_eq!(
        complete(&env, &["tool", "get", "we"]),
        ["weather/", "weather-alerts", "web-search"]
    );
    // Built-in tools come from the binary.
    assert_eq!(
        complete(&env, &["invoke", "builtin/re"]),
        ["builtin/readfile"]
    );
    // Flags that take a tool complete the same way.
    assert_eq!(
        complete(
            &env,
            &["export", "--provider", "openai", "--tool", "github/get-r"]
        ),
        ["github/get-repo"]
    );
    assert_eq!(
        complete(&env, &["mcp", "serve", "--tool", "calendar/delete"]),
        ["calendar/delete-event"]
    );
    assert_eq!(
        tree(env.catalog()),
        before,
        "completion wrote to the catalog"
    );
}

#[test]
fn bundles_agents_and_servers_complete_from_the_catalog() {
    let env = TestEnv::fixture();
    let all = [
        "builtin", "calendar", "files", "finance", "github", "search", "weather",
    ];
    assert_eq!(complete(&env, &["bundle", "get", ""]), all);
    assert_eq!(
        complete(&env, &["search", "x", "--bundle", "f"]),
        ["files", "finance"]
    );
    assert_eq!(
        complete(&env, &["tool", "list", "--bundle", "we"]),
        ["weather"]
    );
    assert_eq!(complete(&env, &["tool", "new", "gi"]), ["github"]);

    // Agents: the IDs of the agent files.
    let agent = "agent-0190a000-0000-7000-8000-000000000001";
    env.run(&["attach", agent, "--query", "weather forecast"])
        .success();
    let other = "agent-0190a000-0000-7000-8000-000000000002";
    env.run(&["attach", other]).success();
    assert_eq!(complete(&env, &["agent", "show", ""]), [agent, other]);
    assert_eq!(
        complete(
            &env,
            &["attach", "agent-0190a000-0000-7000-8000-0000000000"]
        ),
        [agent, other]
    );
    assert_eq!(
        complete(
            &env,
            &[
                "agent",
                "detach",
                "agent-0190a000-0000-7000-8000-000000000002"
            ]
        ),
        [other]
    );

    // MCP servers: the names under mcpServers.
    env.edit_config(|c| {
        c["mcpServers"] = serde_json::json!({
            "clock": { "command": "clock-server" },
            "files": { "url": "http://127.0.0.1:9/mcp" }
        })
    });
    assert_eq!(complete(&env, &["mcp", "import", ""]), ["clock", "files"]);
}

#[test]
fn closed_sets_of_values_complete() {
    let env = TestEnv::new();
    assert_eq!(
        complete(&env, &["export", "--provider", ""]),
        [
            "openai",
            "openai-responses",
            "anthropic",
            "ollama",
            "gemini",
            "mcp"
        ]
    );
    assert_eq!(
        complete(&env, &["pick", "x", "--emit", "o"]),
        ["openai", "openai-responses", "ollama"]
    );
    assert_eq!(
        complete(&env, &["pick", "x", "--scorer", ""]),
        ["keyword", "bm25", "fused", "hybrid", "embed", "llm"]
    );
    assert_eq!(
        complete(&env, &["mcp", "serve", "--mode", ""]),
        ["auto", "all", "search"]
    );
    assert_eq!(
        complete(&env, &["validate", "--format", ""]),
        ["human", "json", "github"]
    );
    assert_eq!(
        complete(&env, &["--color", ""]),
        ["auto", "always", "never"]
    );
}

#[test]
fn completion_honours_the_catalog_variable_and_the_flag() {
    let env = TestEnv::fixture();
    let catalog = env.catalog().display().to_string();
    // $TOOLCTL_CATALOG.
    assert_eq!(
        complete_raw(
            &env,
            &["toolctl", "bundle", "get", "wea"],
            &[("TOOLCTL_CATALOG", &catalog)]
        ),
        ["weather"]
    );
    // --catalog=DIR, over the variable.
    let empty = TestEnv::new();
    let flag = format!("--catalog={catalog}");
    assert_eq!(
        complete_raw(
            &env,
            &["toolctl", &flag, "bundle", "get", "wea"],
            &[("TOOLCTL_CATALOG", &empty.catalog().display().to_string())]
        ),
        ["weather"]
    );
    // The nearest catalog above the working folder.
    let run = {
        let mut cmd = env.bare_command();
        cmd.current_dir(env.catalog().join("bundles"))
            .env("COMPLETE", "fish")
            .args(["--", "toolctl", "bundle", "get", "git"]);
        crate::common::Run::of(cmd, None)
    };
    run.success();
    assert_eq!(
        run.stdout
            .lines()
            .map(|l| l.split('\t').next().unwrap())
            .collect::<Vec<_>>(),
        ["github"]
    );
}

#[test]
fn a_missing_or_broken_catalog_completes_quietly() {
    let env = TestEnv::uninit();
    // The catalog folder does not exist: no candidates, nothing on stderr, exit 0, nothing made.
    assert_eq!(
        complete(&env, &["bundle", "get", "w"]),
        Vec::<String>::new()
    );
    assert_eq!(complete(&env, &["agent", "show", ""]), Vec::<String>::new());
    assert!(!env.catalog().exists(), "completion created the catalog");
    // A toolctl.json that does not parse: the same.
    std::fs::create_dir_all(env.catalog()).unwrap();
    write_file(&env.catalog().join("toolctl.json"), "{");
    assert_eq!(complete(&env, &["invoke", "w"]), Vec::<String>::new());
    assert_eq!(
        tree(env.catalog()).len(),
        1,
        "completion wrote into the catalog"
    );
}

/// The committed bash script, sourced by a real bash, fills COMPREPLY from the binary.
#[test]
fn the_committed_bash_script_completes_in_bash() {
    let env = TestEnv::fixture();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("completions/toolctl.bash");
    let path = format!(
        "{}:{}",
        bin().parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let probe = format!(
        r#"source {script}
COMP_WORDS=(toolctl --catalog {catalog} invoke weather/forecast@v2); COMP_CWORD=4; COMP_TYPE=9
_clap_complete_toolctl toolctl weather/forecast@v2 invoke
printf '%s\n' "${{COMPREPLY[@]}}""#,
        script = script.display(),
        catalog = env.catalog().display()
    );
    let output = Command::new("bash")
        .arg("-c")
        .arg(probe)
        .env_clear()
        .env("PATH", path)
        .env("HOME", env.home())
        .env("TOOLCTL_WATCH", "never")
        .current_dir(env.work())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(
        stdout.lines().collect::<Vec<_>>(),
        ["weather/forecast@v2", "weather/forecast@v2.1"],
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// `toolctl completions SHELL` prints what is committed under completions/ (a test of the
/// library keeps those files in step), and `COMPLETE=SHELL toolctl` the same script calling the
/// binary by its path.
#[test]
fn the_completions_command_prints_the_registration_script() {
    let env = TestEnv::new();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (shell, file) in [
        ("bash", "toolctl.bash"),
        ("zsh", "_toolctl"),
        ("fish", "toolctl.fish"),
    ] {
        let run = env.run(&["completions", shell]);
        run.success();
        let committed = std::fs::read_to_string(root.join("completions").join(file)).unwrap();
        assert_eq!(run.stdout, committed, "{shell}");
        assert!(run.stdout.contains("COMPLETE="), "{shell}: {}", run.stdout);
        let mut cmd = env.bare_command();
        cmd.env("COMPLETE", shell);
        let direct = crate::common::Run::of(cmd, None);
        direct.success();
        assert!(
            direct.stdout.contains(&bin().display().to_string()),
            "{shell}: {direct}"
        );
    }
}
