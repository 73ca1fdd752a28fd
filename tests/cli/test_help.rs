//! Help that teaches: `--help` lists the values of closed sets and keeps the global options apart,
//! the main commands end their long help with EXAMPLES that run as shown (here, on a copy of
//! fixtures/catalog), and `toolctl man` makes a man page per command.

use crate::common::{Run, TestEnv, bin, copy_tree};
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// Every command users see (`["tool", "get"]`), from the command line's definition; hidden
/// ones (the background worker) left out.
fn command_paths() -> Vec<Vec<String>> {
    use clap::CommandFactory;
    fn walk(command: &clap::Command, path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
        for sub in command.get_subcommands() {
            if sub.get_name() == "help" || sub.is_hide_set() {
                continue;
            }
            path.push(sub.get_name().to_owned());
            out.push(path.clone());
            walk(sub, path, out);
            path.pop();
        }
    }
    let mut out = Vec::new();
    walk(&toolctl::cli::Cli::command(), &mut Vec::new(), &mut out);
    out
}

/// The text after the options of a command's long help, as the command line defines it.
fn definition(path: &[String]) -> String {
    use clap::CommandFactory;
    let mut command = toolctl::cli::Cli::command();
    for name in path {
        command = command.find_subcommand(name).unwrap().clone();
    }
    command.get_after_long_help().unwrap().to_string()
}

/// The lines of `--help`'s section `heading` (up to the next heading).
fn section<'a>(help: &'a str, heading: &str) -> Vec<&'a str> {
    help.lines()
        .skip_while(|line| *line != heading)
        .skip(1)
        .take_while(|line| line.is_empty() || line.starts_with(' '))
        .collect()
}

#[test]
fn help_lists_the_values_of_closed_sets() {
    let env = TestEnv::new();
    for (args, flag, values) in [
        (
            &["export", "--help"][..],
            "--provider <PROVIDER>",
            &[
                "openai",
                "openai-responses",
                "anthropic",
                "ollama",
                "gemini",
                "mcp",
            ][..],
        ),
        (
            &["pick", "--help"],
            "--scorer <NAME>",
            &["keyword", "bm25", "fused", "hybrid", "embed", "llm"],
        ),
        (
            &["pick", "--help"],
            "--emit <PROVIDER>",
            &["openai", "gemini"],
        ),
        (
            &["invoke", "--help"],
            "--provider <PROVIDER>",
            &["anthropic", "ollama"],
        ),
        (&["validate", "--help"], "--provider <PROVIDER>", &["mcp"]),
        (&["attach", "--help"], "--scorer <NAME>", &["hybrid"]),
        (
            &["mcp", "serve", "--help"],
            "--mode <MODE>",
            &["auto", "all", "search"],
        ),
    ] {
        let run = env.run(args);
        run.success();
        // The flag's entry: from its line to the next flag.
        let entry: Vec<&str> = run
            .stdout
            .lines()
            .skip_while(|line| !line.trim_start().starts_with(flag))
            .take_while(|line| !line.trim_start().starts_with("--") || line.contains(flag))
            .collect();
        let entry = entry.join("\n");
        assert!(entry.contains("Possible values:"), "{flag}:\n{run}");
        for value in values {
            assert!(
                entry.contains(&format!("- {value}:")),
                "{flag} does not list {value}:\n{entry}"
            );
        }
    }
    // -h says them in a line (wrapped to the terminal).
    let run = env.run(&["export", "-h"]);
    let words = run.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains(
            "[possible values: openai, openai-responses, anthropic, ollama, gemini, mcp]"
        ),
        "{run}"
    );
}

#[test]
fn global_options_are_listed_apart_from_a_commands_own() {
    let env = TestEnv::new();
    let globals = [
        "--catalog <DIR>",
        "--json",
        "-q, --quiet",
        "--no-progress",
        "--color <WHEN>",
        "--lock-timeout <DURATION>",
    ];
    for args in [
        &["search", "-h"][..],
        &["tool", "get", "--help"],
        &["mcp", "serve", "-h"],
        &["-h"],
    ] {
        let run = env.run(args);
        run.success();
        let own = section(&run.stdout, "Options:").join("\n");
        let global = section(&run.stdout, "Global options:").join("\n");
        for flag in globals {
            assert!(
                global.contains(flag),
                "{flag} not under Global options\n{run}"
            );
            assert!(
                !own.contains(flag),
                "{flag} among the command's own options\n{run}"
            );
        }
    }
    let run = env.run(&["search", "-h"]);
    assert!(
        section(&run.stdout, "Options:")
            .join("\n")
            .contains("--bundle <BUNDLE>"),
        "{run}"
    );
}

/// The commands whose long help must end with examples.
const WITH_EXAMPLES: &[&[&str]] = &[
    &["search"],
    &["pick"],
    &["export"],
    &["invoke"],
    &["validate"],
    &["tool", "put"],
    &["tool", "get"],
    &["attach"],
    &["mcp", "serve"],
    &["config"],
    &["completions"],
    &["man"],
];

/// The command lines of a help's Examples section: its lines but comments, a line ending with
/// `|` joined to the next.
fn example_lines(help: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut open = false;
    for line in section(help, "Examples:") {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        match out.last_mut() {
            Some(last) if open => {
                last.push(' ');
                last.push_str(line);
            }
            _ => out.push(line.to_owned()),
        }
        open = line.ends_with('|');
    }
    out
}

/// Every EXAMPLES line of every command runs as shown, in a shell, on a copy of
/// fixtures/catalog (`$TOOLCTL_CATALOG`), from a folder holding the repository's docs/examples:
/// exit 0 (`validate`: 0 or 3, the fixture has a broken tool on purpose).
#[test]
fn the_examples_in_help_run() {
    let env = TestEnv::fixture();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    copy_tree(
        &root.join("docs/examples"),
        &env.work().join("docs/examples"),
    );
    // What a fish user has.
    std::fs::create_dir_all(env.home().join(".config/fish")).unwrap();
    let path = format!(
        "{}:{}",
        bin().parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut with_examples = BTreeSet::new();
    let mut ran = 0;
    for command in command_paths() {
        let mut args: Vec<&str> = command.iter().map(String::as_str).collect();
        args.push("--help");
        let help = env.run(&args);
        help.success();
        if !help.stdout.contains("\nExamples:\n") {
            continue;
        }
        with_examples.insert(command.join(" "));
        let lines = example_lines(&help.stdout);
        assert!(
            !lines.is_empty(),
            "{}: no command lines\n{help}",
            command.join(" ")
        );
        // As written: clap did not wrap a line (a wrapped command line no longer pastes).
        let written = definition(&command);
        assert!(
            help.stdout.contains(&written),
            "clap wrapped an example line of `{}`: keep them under 96 characters\n{help}",
            command.join(" ")
        );
        for line in lines {
            assert!(
                line.contains("toolctl"),
                "an example without toolctl: {line}"
            );
            let mut sh = Command::new("sh");
            sh.arg("-c")
                .arg(&line)
                .env_clear()
                .env("PATH", &path)
                .env("HOME", env.home())
                .env("XDG_DATA_HOME", env.xdg_data())
                .env("XDG_CONFIG_HOME", env.root().join("xdg-config"))
                .env("TOOLCTL_CATALOG", env.catalog())
                .env("TOOLCTL_WATCH", "never")
                .env("NO_COLOR", "1")
                .env("COLUMNS", "100")
                .current_dir(env.work())
                .stdin(std::process::Stdio::null());
            let run = Run::of(sh, None);
            let allowed: &[i32] = if command == ["validate"] {
                &[0, 3]
            } else {
                &[0]
            };
            assert!(
                allowed.contains(&run.code()),
                "the example `{line}` failed\n{run}"
            );
            ran += 1;
        }
    }
    for command in WITH_EXAMPLES {
        assert!(
            with_examples.contains(&command.join(" ")),
            "`{}` --help has no Examples section",
            command.join(" ")
        );
    }
    assert!(ran >= 30, "only {ran} examples ran");
    // What the examples did, seen from the catalog.
    assert!(
        env.run(&["tool", "get", "files/forecast@v2"]).code() == 0,
        "the tool put examples did not put"
    );
    let hosts = env.json(&["config", "get", "reap.gracePeriod"]);
    assert_eq!(hosts, "7d");
    assert!(
        std::fs::read_to_string(env.home().join(".bashrc"))
            .unwrap()
            .contains("COMPLETE=bash toolctl")
    );
}

#[test]
fn man_writes_a_page_per_command() {
    let env = TestEnv::new();
    let dir = env.root().join("man/man1");
    let run = env.run(&["man", "--out", &dir.display().to_string()]);
    run.success();
    let written: BTreeSet<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let mut expected: BTreeSet<String> = command_paths()
        .iter()
        .map(|path| format!("toolctl-{}.1", path.join("-")))
        .collect();
    expected.insert("toolctl.1".to_owned());
    assert_eq!(written, expected);
    // Each is listed, and each is a page of its command.
    assert_eq!(run.stdout.lines().count(), expected.len(), "{run}");
    let page = std::fs::read_to_string(dir.join("toolctl-tool-get.1")).unwrap();
    assert!(page.contains(".TH toolctl-tool-get 1"), "{page}");
    assert!(page.contains("toolctl tool get"), "{page}");
    // The examples are in the pages too.
    let page = std::fs::read_to_string(dir.join("toolctl-pick.1")).unwrap();
    assert!(page.contains("\\-\\-emit openai"), "{page}");

    // Without --out: one page on stdout.
    let run = env.run(&["man", "mcp", "serve"]);
    run.success().stdout_has(".TH toolctl-mcp-serve 1");
    let run = env.run(&["man"]);
    run.success().stdout_has(".TH toolctl 1");
    // A command that does not exist is a usage error naming it.
    let run = env.run(&["man", "tool", "frob"]);
    run.failure(2)
        .stderr_has("no command 'frob' in toolctl tool");
}

/// The install lines the manual gives for bash, zsh and fish (docs/completions.md) are the `completions` examples
/// that [`the_examples_in_help_run`] runs, and bash completes with the one it gives.
#[test]
fn the_manuals_install_lines_are_the_tested_ones() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let page = std::fs::read_to_string(root.join("docs/completions.md")).unwrap();
    let examples = definition(&["completions".to_owned()]);
    let lines: Vec<&str> = page
        .lines()
        .filter(|line| line.starts_with("echo '") && line.contains("COMPLETE="))
        .map(|line| line.split(" # ").next().unwrap().trim_end())
        .collect();
    assert_eq!(lines.len(), 3, "bash, zsh and fish: {lines:?}");
    for line in &lines {
        assert!(
            examples.contains(line),
            "docs/completions.md's `{line}` is not among the examples of `toolctl completions --help`"
        );
    }
    // What the bash line sources, in a real bash, completes from the catalog.
    let env = TestEnv::fixture();
    let path = format!(
        "{}:{}",
        bin().parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let probe = r#"source <(COMPLETE=bash toolctl)
COMP_WORDS=(toolctl bundle get we); COMP_CWORD=3; COMP_TYPE=9
_clap_complete_toolctl toolctl we get
printf '%s\n' "${COMPREPLY[@]}""#;
    let output = Command::new("bash")
        .arg("-c")
        .arg(probe)
        .env_clear()
        .env("PATH", path)
        .env("HOME", env.home())
        .env("TOOLCTL_CATALOG", env.catalog())
        .current_dir(env.work())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    assert_eq!(String::from_utf8(output.stdout).unwrap(), "weather\n");
}

/// Every command says in a line what it is for, where its parent's `--help` lists it.
#[test]
fn every_command_has_a_description() {
    use clap::CommandFactory;
    for path in command_paths() {
        let mut command = toolctl::cli::Cli::command();
        for name in &path {
            command = command.find_subcommand(name).unwrap().clone();
        }
        assert!(
            command
                .get_about()
                .is_some_and(|about| !about.to_string().trim().is_empty()),
            "toolctl {} has no description",
            path.join(" ")
        );
    }
}
