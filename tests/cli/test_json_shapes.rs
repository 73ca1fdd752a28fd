//! The manual's table of every command's `--json` shape (docs/JSON.md, section "Every command's
//! shape") is tested here, so it cannot drift from the code: every subcommand clap knows has a
//! row, and each row's command, run with `--json` on a temporary catalog, prints the top-level
//! shape the row gives (the same page has the rules the table follows).

use crate::common::{Run, TestEnv, tool_doc};
use crate::test_mcp_tools::toolctl_server;
use clap::CommandFactory;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const PAGE: &str = "docs/JSON.md";
const HEADING: &str = "## Every command's shape";

/// A top-level shape, as the table's second column writes it.
#[derive(Debug, PartialEq)]
enum Shape {
    /// `{a, b?, …}`: an object holding every key of `required`, and (unless `open`) no key
    /// outside `required` and `optional`.
    Object {
        required: Vec<String>,
        optional: Vec<String>,
        open: bool,
    },
    /// `[…]`
    Array,
    /// `any`
    Any,
    /// `none`: nothing on stdout.
    Nothing,
}

/// One row of the table: the commands of its first column (code spans) and its shape.
#[derive(Debug)]
struct Row {
    commands: Vec<String>,
    shape: Shape,
    text: String,
}

fn code_spans(text: &str) -> Vec<String> {
    let spans = regex::Regex::new("`([^`]+)`").unwrap();
    spans.captures_iter(text).map(|c| c[1].to_owned()).collect()
}

/// Split `text` at the commas outside brackets.
fn top_level_entries(text: &str) -> Vec<String> {
    let (mut entries, mut current, mut depth) = (Vec::new(), String::new(), 0i32);
    for c in text.chars() {
        match c {
            '{' | '[' | '(' => depth += 1,
            '}' | ']' | ')' => depth -= 1,
            ',' if depth == 0 => {
                entries.push(std::mem::take(&mut current).trim().to_owned());
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    if !current.trim().is_empty() {
        entries.push(current.trim().to_owned());
    }
    entries
}

fn parse_shape(text: &str) -> Shape {
    match text {
        "none" => return Shape::Nothing,
        "any" => return Shape::Any,
        "[…]" => return Shape::Array,
        _ => {}
    }
    let inner = text
        .strip_prefix('{')
        .and_then(|t| t.strip_suffix('}'))
        .unwrap_or_else(|| panic!("the --json table: cannot read the shape `{text}`"));
    let (mut required, mut optional, mut open) = (Vec::new(), Vec::new(), false);
    for entry in top_level_entries(inner) {
        if entry == "…" {
            open = true;
            continue;
        }
        let key = entry.split(':').next().unwrap().trim();
        assert!(
            !key.is_empty() && !key.contains(' '),
            "the --json table: `{entry}` in `{text}` is not a key"
        );
        match key.strip_suffix('?') {
            Some(key) => optional.push(key.to_owned()),
            None => required.push(key.to_owned()),
        }
    }
    Shape::Object {
        required,
        optional,
        open,
    }
}

/// The rows of the manual's `--json` table.
fn table_rows() -> Vec<Row> {
    let page = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(PAGE)).unwrap();
    let lines: Vec<&str> = page.lines().collect();
    let start = lines
        .iter()
        .position(|l| *l == HEADING)
        .unwrap_or_else(|| panic!("{PAGE} has no heading {HEADING}"));
    let table: Vec<&str> = lines[start..]
        .iter()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .copied()
        .collect();
    assert!(table.len() > 2, "the {HEADING} section has no table");
    assert_eq!(table[0], "| command | `--json` prints |");
    table[2..]
        .iter()
        .map(|line| {
            let cells: Vec<&str> = line.trim().trim_matches('|').split('|').collect();
            assert_eq!(cells.len(), 2, "a row of two cells (no '|' inside): {line}");
            let commands = code_spans(cells[0]);
            assert!(!commands.is_empty(), "a row names no command: {line}");
            let shape = code_spans(cells[1])
                .into_iter()
                .next()
                .unwrap_or_else(|| panic!("a row gives no shape: {line}"));
            Row {
                commands,
                shape: parse_shape(&shape),
                text: (*line).to_owned(),
            }
        })
        .collect()
}

/// Every command clap runs and shows (subcommands with no subcommands of their own, hidden ones
/// left out), as "bundle list".
fn clap_commands() -> BTreeSet<String> {
    fn walk(command: &clap::Command, path: &mut Vec<String>, out: &mut BTreeSet<String>) {
        let subcommands: Vec<&clap::Command> = command
            .get_subcommands()
            .filter(|c| c.get_name() != "help" && !c.is_hide_set())
            .collect();
        if subcommands.is_empty() {
            out.insert(path.join(" "));
        }
        for sub in subcommands {
            path.push(sub.get_name().to_owned());
            walk(sub, path, out);
            path.pop();
        }
    }
    let mut out = BTreeSet::new();
    walk(&toolctl::cli::Cli::command(), &mut Vec::new(), &mut out);
    out
}

/// The clap command a row's command text names: its leading words that are subcommands.
fn command_path(text: &str) -> String {
    let root = toolctl::cli::Cli::command();
    let mut command = &root;
    let mut path = Vec::new();
    for word in text.split_whitespace() {
        match command.find_subcommand(word) {
            Some(sub) => {
                path.push(word);
                command = sub;
            }
            None => break,
        }
    }
    path.join(" ")
}

#[test]
fn every_subcommand_has_a_row_in_the_json_table() {
    let rows = table_rows();
    let known = clap_commands();
    assert!(known.len() > 30, "clap's tree: {known:?}");
    let named: BTreeSet<String> = rows
        .iter()
        .flat_map(|r| r.commands.iter().map(|c| command_path(c)))
        .collect();
    let missing: Vec<&String> = known.difference(&named).collect();
    assert!(
        missing.is_empty(),
        "{PAGE} {HEADING}: no row for {missing:?}"
    );
    let unknown: Vec<&String> = named.difference(&known).collect();
    assert!(
        unknown.is_empty(),
        "{PAGE} {HEADING}: rows name {unknown:?}, which clap does not run"
    );
}

/// A catalog on which every row's command can run, and what the rows need.
struct Setup {
    env: TestEnv,
    files: PathBuf,
    archive: String,
    batch: String,
    tool_file: String,
    /// A job that succeeded, and one still queued.
    jobs: [String; 2],
    /// Kept alive: `mcp import` reads from this catalog's `mcp serve`.
    _server: TestEnv,
}

const AGENT: &str = "agent-3f2b8c1e-9d4a-4e6b-8a7c-0000000000aa";

impl Setup {
    fn new() -> Self {
        let env = TestEnv::fixture_with_legacy_tool();
        let server = TestEnv::fixture();
        let files = env.root().join("shapes");
        std::fs::create_dir_all(&files).unwrap();
        env.edit_config(|config| {
            // `index watch` in the foreground ends after a second with nothing to do.
            config["index"] = json!({ "watchIdle": "1s" });
            config["mcpServers"] = json!({ "other": toolctl_server(&server, &[]) });
        });
        let archive = files.join("weather.zip").display().to_string();
        env.run(&["bundle", "export", "weather", "-o", &archive])
            .success();
        env.run(&["bundle", "put", "--slug", "scratch"]).success();
        let batch = files.join("batch.json");
        std::fs::write(
            &batch,
            json!({ "calls": [
                { "call_id": "a", "name": "builtin/now", "arguments": {} },
                { "call_id": "b", "name": "no/such", "arguments": {} },
            ]})
            .to_string(),
        )
        .unwrap();
        let tool_file = files.join("tool.json");
        std::fs::write(&tool_file, tool_doc("shape-put", "v1").to_string()).unwrap();
        let store = toolctl_lib::jobs::Store::open(&env.catalog().join(".toolctl")).unwrap();
        let call = |call_id: &str| toolctl_lib::jobs::NewJob {
            queue: "default".into(),
            call_id: call_id.into(),
            name: "builtin/now@v1".into(),
            arguments: json!({}),
            workspace: None,
        };
        let made = store.create(&[call("done"), call("waiting")]).unwrap();
        store.start(&made[0].id).unwrap();
        store
            .finish(&made[0].id, &json!({ "ok": true, "output": {} }))
            .unwrap();
        Self {
            env,
            jobs: [made[0].id.clone(), made[1].id.clone()],
            archive,
            batch: batch.display().to_string(),
            tool_file: tool_file.display().to_string(),
            files,
            _server: server,
        }
    }

    /// How the test runs a row's command: commands to run first (they must succeed), the
    /// arguments, and the exit code.
    fn invocation(&self, command: &str) -> (Vec<Vec<String>>, Vec<String>, i32) {
        let owned = |args: &[&str]| args.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>();
        let new_catalog = self.files.join("new-catalog").display().to_string();
        let attach = owned(&["attach", AGENT, "--query", "weather forecast"]);
        let (prep, args, exit): (Vec<Vec<String>>, Vec<String>, i32) = match command {
            "init" => (vec![], owned(&["init", &new_catalog]), 0),
            "bundle list" => (vec![], owned(&["bundle", "list"]), 0),
            "bundle get" => (vec![], owned(&["bundle", "get", "weather"]), 0),
            "bundle put" => (vec![], owned(&["bundle", "put", "--slug", "put-one"]), 0),
            "bundle enable" | "bundle disable" | "bundle delete" | "bundle restore" => {
                let verb = command.split(' ').nth(1).unwrap();
                let slug = format!("b-{verb}");
                let mut prep = vec![owned(&["bundle", "put", "--slug", &slug, "--disabled"])];
                if verb == "restore" {
                    prep.push(owned(&["bundle", "delete", &slug]));
                }
                (prep, owned(&["bundle", verb, &slug]), 0)
            }
            "bundle delete --with-tools" => (
                vec![
                    owned(&["bundle", "put", "--slug", "with-tools"]),
                    owned(&["tool", "new", "with-tools", "t"]),
                ],
                owned(&["bundle", "delete", "with-tools", "--with-tools"]),
                0,
            ),
            "bundle reap" => (vec![], owned(&["bundle", "reap"]), 0),
            "bundle export -o FILE" => {
                let file = self.files.join("out.zip").display().to_string();
                (
                    vec![],
                    owned(&["bundle", "export", "weather", "-o", &file]),
                    0,
                )
            }
            "bundle import" => (
                vec![],
                owned(&[
                    "bundle",
                    "import",
                    &self.archive,
                    "--as-new",
                    "--slug",
                    "copy",
                ]),
                0,
            ),
            "bundle import --update" => (
                vec![],
                owned(&["bundle", "import", &self.archive, "--update"]),
                0,
            ),
            "tool list" => (vec![], owned(&["tool", "list"]), 0),
            "tool get" => (vec![], owned(&["tool", "get", "weather/forecast"]), 0),
            "tool put" => (
                vec![],
                owned(&["tool", "put", "--bundle", "scratch", &self.tool_file]),
                0,
            ),
            "tool new" => (vec![], owned(&["tool", "new", "scratch", "shape-new"]), 0),
            "tool enable" => (vec![], owned(&["tool", "enable", "builtin/now"]), 0),
            "tool disable" => (
                vec![],
                owned(&["tool", "disable", "weather/weather-alerts"]),
                0,
            ),
            "tool delete" => (
                vec![owned(&["tool", "new", "scratch", "shape-gone"])],
                owned(&["tool", "delete", "scratch/shape-gone"]),
                0,
            ),
            "search" => (vec![], owned(&["search", "forecast"]), 0),
            "pick" => (vec![], owned(&["pick", "weather forecast"]), 0),
            "pick --emit P" => (
                vec![],
                owned(&["pick", "weather forecast", "--emit", "openai"]),
                0,
            ),
            "export --provider P" => (vec![], owned(&["export", "--provider", "anthropic"]), 0),
            "attach AGENT" => (vec![], attach, 0),
            "agent list" => (vec![attach], owned(&["agent", "list"]), 0),
            "agent show" => (vec![attach], owned(&["agent", "show", AGENT]), 0),
            "agent detach" => (vec![attach], owned(&["agent", "detach", AGENT, "--all"]), 0),
            "invoke TOOL" => (vec![], owned(&["invoke", "builtin/now"]), 0),
            "invoke --batch FILE" => (vec![], owned(&["invoke", "--batch", &self.batch]), 0),
            "invoke --batch FILE --async" => (
                vec![],
                owned(&["invoke", "--batch", &self.batch, "--async"]),
                0,
            ),
            // The legacy tool names a native function this binary lacks: validate finds
            // the error (exit 3) and still prints its document.
            "validate" => (vec![], owned(&["validate"]), 3),
            "schema tool" => (vec![], owned(&["schema", "tool"]), 0),
            "index status" => (vec![], owned(&["index", "status"]), 0),
            "index rebuild" => (vec![], owned(&["index", "rebuild"]), 0),
            "index watch --detach" => (vec![], owned(&["index", "watch", "--detach"]), 0),
            "index watch --stop" => (vec![], owned(&["index", "watch", "--stop"]), 0),
            "index watch" => (
                vec![owned(&["index", "watch", "--stop"])],
                owned(&["index", "watch"]),
                0,
            ),
            "config get" => (vec![], owned(&["config", "get"]), 0),
            "config get KEY" => (vec![], owned(&["config", "get", "allowedHosts"]), 0),
            "config set" => (
                vec![],
                owned(&["config", "set", "reap.gracePeriod", "24h"]),
                0,
            ),
            "config add" => (
                vec![],
                owned(&["config", "add", "allowedHosts", "added.example"]),
                0,
            ),
            "config remove" => (
                vec![owned(&["config", "add", "allowedHosts", "removed.example"])],
                owned(&["config", "remove", "allowedHosts", "removed.example"]),
                0,
            ),
            "mcp import SERVER" => (vec![], owned(&["mcp", "import", "other"]), 0),
            "mcp serve" => (vec![], owned(&["mcp", "serve"]), 3),
            "serve" => (vec![], owned(&["serve"]), 3),
            "job list" => (vec![], owned(&["job", "list"]), 0),
            "job get ID" => (vec![], owned(&["job", "get", &self.jobs[0]]), 0),
            "job wait ID" => (vec![], owned(&["job", "wait", &self.jobs[0]]), 0),
            "job cancel ID" => (vec![], owned(&["job", "cancel", &self.jobs[1]]), 0),
            "job prune" => (vec![], owned(&["job", "prune"]), 0),
            "completions bash" => (vec![], owned(&["completions", "bash"]), 0),
            "man COMMAND" => (vec![], owned(&["man", "pick"]), 0),
            "man --out DIR" => {
                let dir = self.files.join("man").display().to_string();
                (vec![], owned(&["man", "--out", &dir]), 0)
            }
            "tool get no/such" => (vec![], owned(&["tool", "get", "no/such"]), 4),
            other => panic!(
                "{PAGE} {HEADING} names `{other}`, which tests/cli/test_json_shapes.rs does not know how to run: add it to Setup::invocation"
            ),
        };
        (prep, args, exit)
    }
}

/// Stops a watcher `index watch --detach` may have left running.
struct StopWatcher<'a>(&'a TestEnv);

impl Drop for StopWatcher<'_> {
    fn drop(&mut self) {
        let _ = self.0.run(&["index", "watch", "--stop"]);
    }
}

#[track_caller]
fn check(row: &Row, command: &str, run: &Run) {
    let context = format!("{PAGE} row {}\n`{command}`: {run}", row.text);
    if row.shape == Shape::Nothing {
        assert_eq!(run.stdout, "", "{context}");
        return;
    }
    let doc: Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("not one JSON document ({e}): {context}"));
    match &row.shape {
        Shape::Nothing | Shape::Any => {}
        Shape::Array => assert!(doc.is_array(), "not an array: {context}"),
        Shape::Object {
            required,
            optional,
            open,
        } => {
            let map = doc
                .as_object()
                .unwrap_or_else(|| panic!("not an object: {context}"));
            for key in required {
                assert!(map.contains_key(key), "no key {key}: {context}");
            }
            if !open {
                let extra: Vec<&String> = map
                    .keys()
                    .filter(|k| !required.contains(k) && !optional.contains(k))
                    .collect();
                assert!(
                    extra.is_empty(),
                    "keys {extra:?} the row does not give: {context}"
                );
            }
        }
    }
}

#[test]
fn every_row_of_the_json_table_is_what_the_command_prints() {
    let rows = table_rows();
    let setup = Setup::new();
    let _stop = StopWatcher(&setup.env);
    let mut ran = 0;
    for row in &rows {
        for command in &row.commands {
            let (prep, args, exit) = setup.invocation(command);
            for step in &prep {
                let step: Vec<&str> = step.iter().map(String::as_str).collect();
                setup.env.run(&step).success();
            }
            let mut all = vec!["--json"];
            all.extend(args.iter().map(String::as_str));
            let run = setup.env.run(&all);
            assert_eq!(run.code(), exit, "`{command}`: {run}");
            check(row, command, &run);
            ran += 1;
        }
    }
    assert!(ran > 40, "ran {ran} commands");
}

/// The shape reader itself: what a row means.
#[test]
fn the_table_notation_reads_as_documented() {
    assert_eq!(
        parse_shape("{ok, value, details?}"),
        Shape::Object {
            required: vec!["ok".into(), "value".into()],
            optional: vec!["details".into()],
            open: false
        }
    );
    assert_eq!(
        parse_shape("{items: [{a, b}], nextPageToken, …}"),
        Shape::Object {
            required: vec!["items".into(), "nextPageToken".into()],
            optional: vec![],
            open: true
        }
    );
    assert_eq!(parse_shape("[…]"), Shape::Array);
    assert_eq!(parse_shape("none"), Shape::Nothing);
    assert_eq!(command_path("bundle delete --with-tools"), "bundle delete");
    assert_eq!(command_path("config get KEY"), "config get");
    assert_eq!(command_path("invoke --batch FILE"), "invoke");
}
