//! `validate`, `schema` and `tool new`: the fixture corpus under `tests/fixtures/validate/`.
//!
//! `valid/` is a small catalog with no problems. Each folder under `invalid/` breaks one rule:
//! its files are laid over a copy of `valid/` (same paths), `toolctl validate` runs in the
//! catalog (with the words of its `args` file, if any), and the output must be exactly its
//! `expected.txt`. To refresh the expected outputs after a deliberate change of wording:
//! `UPDATE_EXPECTED=1 cargo test --test cli validate` — and read the diff.

use crate::common::{Run, TestEnv, copy_tree};
use serde_json::Value;
use std::path::{Path, PathBuf};
use toolctl_lib::catalog::model::{self, Bundle, Tool};
use toolctl_lib::catalog::schemas::{self, Kind};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/validate")
}

/// A test environment whose catalog is `valid/` with the files of `case` (if any) laid over.
fn catalog_with(case: Option<&str>) -> TestEnv {
    let env = TestEnv::uninit();
    copy_tree(&corpus().join("valid"), env.catalog());
    if let Some(case) = case {
        copy_tree(&corpus().join("invalid").join(case), env.catalog());
        for extra in ["expected.txt", "args"] {
            let _ = std::fs::remove_file(env.catalog().join(extra));
        }
    }
    env
}

/// `toolctl ARGS` run inside the catalog (paths print relative to it).
fn in_catalog(env: &TestEnv, args: &[&str]) -> Run {
    let mut cmd = env.bare_command();
    cmd.current_dir(env.catalog()).args(args);
    Run::of(cmd, None)
}

fn cases() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(corpus().join("invalid"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn the_valid_catalog_has_no_problems() {
    let env = catalog_with(None);
    let run = in_catalog(&env, &["validate", "--strict"]);
    run.success();
    assert_eq!(run.stdout, "4 files checked: no problems\n");
}

#[test]
fn each_invalid_case_gives_exactly_its_expected_findings() {
    let update = std::env::var_os("UPDATE_EXPECTED").is_some();
    let mut failures = Vec::new();
    for case in cases() {
        let dir = corpus().join("invalid").join(&case);
        let env = catalog_with(Some(&case));
        let extra = std::fs::read_to_string(dir.join("args")).unwrap_or_default();
        let mut args = vec!["validate"];
        args.extend(extra.split_whitespace());
        let run = in_catalog(&env, &args);
        let expected_file = dir.join("expected.txt");
        if update {
            std::fs::write(&expected_file, &run.stdout).unwrap();
        }
        let expected = std::fs::read_to_string(&expected_file).unwrap_or_default();
        let code = if expected.contains(": error[") { 3 } else { 0 };
        if run.stdout != expected || run.status != Some(code) {
            failures.push(format!(
                "case {case}: exit {:?} (want {code})\n--- got\n{}--- want\n{expected}",
                run.status, run.stdout
            ));
        }
        if code == 0 && !expected.contains(": warning[") {
            failures.push(format!("case {case} finds nothing:\n{expected}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every fixture file through both the JSON Schema and the store's own document checks: what
/// the schema refuses the store refuses, and what the store refuses for a rule a schema can
/// state (shape, names, IDs, schema presence, URL scheme and literal host) the schema refuses.
#[test]
fn the_schemas_and_the_store_agree_on_every_fixture() {
    let mut files = Vec::new();
    collect(&corpus(), &mut files);
    let mut checked = 0;
    for path in files {
        let name = path.file_name().unwrap().to_str().unwrap();
        let kind = match name {
            "toolctl.json" => Kind::Config,
            "bundle.json" => Kind::Bundle,
            "tool.json" => Kind::Tool,
            _ => continue,
        };
        let Ok(doc) = serde_json::from_str::<Value>(&std::fs::read_to_string(&path).unwrap())
        else {
            continue; // The parse case: neither can read it.
        };
        let schema_refuses = !schemas::violations(kind, &doc).is_empty();
        let store = store_violations(kind, &doc, &path);
        let store_refuses = !store.is_empty();
        let stateable = store.iter().any(|rule| {
            matches!(
                rule.as_deref(),
                None | Some("name" | "id" | "no-schema" | "url")
            )
        });
        assert!(
            !schema_refuses || store_refuses,
            "{}: the schema refuses it, the store takes it",
            path.display()
        );
        assert!(
            !stateable || schema_refuses,
            "{}: the store refuses it ({store:?}), the schema takes it",
            path.display()
        );
        checked += 1;
    }
    assert!(checked >= 25, "only {checked} fixture files checked");
}

/// The rules the store's document checks report for a file (`None`: the shape).
fn store_violations(kind: Kind, doc: &Value, path: &Path) -> Vec<Option<&'static str>> {
    let rules = |violations: Vec<toolctl_lib::catalog::Violation>| {
        violations.into_iter().map(|v| v.rule).collect::<Vec<_>>()
    };
    match kind {
        Kind::Tool => match model::typed::<Tool>(doc, "") {
            Ok(tool) => rules(tool.check(doc)),
            Err(_) => vec![None],
        },
        Kind::Bundle => match model::typed::<Bundle>(doc, "") {
            Ok(bundle) => rules(bundle.check(doc)),
            Err(_) => vec![None],
        },
        Kind::Config => match toolctl_lib::catalog::Config::load(path.parent().unwrap()) {
            Ok(_) => Vec::new(),
            Err(_) => vec![None],
        },
    }
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect(&path, out);
        } else {
            out.push(path);
        }
    }
}

#[test]
fn github_annotations_line_for_line() {
    let env = catalog_with(Some("timestamps"));
    copy_tree(&corpus().join("invalid/host"), env.catalog());
    let run = in_catalog(&env, &["validate", "--format", "github"]);
    run.failure(3);
    let late = "bundles/0190c000-0000-7000-8000-0000000000b1/tools/late/v1/tool.json";
    let elsewhere = "bundles/0190c000-0000-7000-8000-0000000000b1/tools/elsewhere/v1/tool.json";
    assert_eq!(
        run.stdout,
        format!(
            "::error file={elsewhere},line=36,col=5,title=toolctl validate%3A host::host 'api.other.test' of urlTemplate is not in allowedHosts of toolctl.json (at /impl/urlTemplate)\n\
             ::error file={late},line=47,col=3,title=toolctl validate%3A timestamps::modifiedAt 2026-01-01T00:00:00Z is before createdAt 2026-02-01T00:00:00Z (at /modifiedAt)\n\
             2 errors and 0 warnings in 6 files\n"
        )
    );
}

/// Bundle `b` with a tool `slug@v1` whose one argument (a string, with no description) is
/// called `name`.
fn put_with_argument_named(env: &TestEnv, slug: &str, description: &str, name: &str) {
    env.bundle("b");
    env.put_tool(
        "b",
        &crate::common::tool_doc_with(
            slug,
            "v1",
            serde_json::json!({
                "description": description,
                "argSchema": { "type": "object", "properties": { name: { "type": "string" } } }
            }),
        ),
    );
}

/// Regression: an argument name holding a newline printed a line of its own in
/// the human format, and a line `::error file=…::` is a workflow command to GitHub Actions
/// whatever toolctl meant by it. Each finding is one line (newline and CR written `\n`, `\r`),
/// as is an error's first line.
#[test]
fn a_newline_in_a_name_never_starts_a_line_of_its_own() {
    let env = TestEnv::new();
    let name = "x\n::error file=a::owned\r::warning::too";
    put_with_argument_named(&env, "nl", "A newline in an argument's name.", name);
    for args in [&["validate"][..], &["validate", "--strict"]] {
        let run = env.run(args);
        let findings: Vec<&str> = run
            .stdout
            .lines()
            .filter(|l| l.contains("[description]"))
            .collect();
        // One finding (the argument has no description), on one line, and every line is
        // toolctl's: a finding or the summary.
        assert_eq!(findings.len(), 1, "{run}");
        assert!(
            findings[0].ends_with(
                "argument 'x\\n::error file=a::owned\\r::warning::too' has no description \
                    (at /argSchema/properties/x\\n::error file=a::owned\\r::warning::too)"
            ),
            "{run}"
        );
        assert_eq!(run.stdout.lines().count(), 2, "{run}");
        for line in run.stdout.lines().chain(run.stderr.lines()) {
            assert!(!line.starts_with("::"), "{line:?}\n{run}");
        }
    }
    // An error's first line too.
    let run = env.run(&["tool", "get", &format!("b/{name}")]);
    run.failure(4);
    assert!(
        run.stderr
            .starts_with("error: tool 'b/x\\n::error file=a::owned\\r::warning::too' "),
        "{run}"
    );
    for line in run.stderr.lines() {
        assert!(!line.starts_with("::"), "{line:?}\n{run}");
    }
}

#[test]
fn strict_fails_on_warnings_and_json_reports_every_finding() {
    let env = catalog_with(Some("warnings"));
    in_catalog(&env, &["validate"]).success();
    let strict = in_catalog(&env, &["validate", "--strict"]);
    strict.failure(3);
    assert!(
        strict.stdout.contains(": error[unsafe-method]"),
        "{}",
        strict.stdout
    );

    let run = in_catalog(&env, &["--json", "validate"]);
    run.success();
    let doc = run.json();
    assert_eq!(doc["ok"], true);
    assert_eq!(doc["errors"], 0);
    assert_eq!(doc["files"], 5);
    let findings = doc["findings"].as_array().unwrap();
    assert_eq!(doc["warnings"].as_u64().unwrap() as usize, findings.len());
    let first = &findings[0];
    for field in [
        "severity", "rule", "file", "line", "column", "pointer", "message",
    ] {
        assert!(!first[field].is_null(), "{field} in {first}");
    }
    let format_json = in_catalog(&env, &["validate", "--format", "json"]);
    assert_eq!(format_json.json()["findings"], doc["findings"]);
}

#[test]
fn paths_narrow_what_is_checked() {
    let env = catalog_with(Some("duplicate-id"));
    let bundle = "bundles/0190c000-0000-7000-8000-0000000000b1";
    // One file alone: no duplicate to see, the file itself is fine.
    let one = in_catalog(
        &env,
        &["validate", &format!("{bundle}/tools/forecast/v2/tool.json")],
    );
    one.success();
    assert_eq!(one.stdout, "1 file checked: no problems\n");
    // The tool's folder: both versions, so the duplicate toolID shows.
    let both = in_catalog(&env, &["validate", &format!("{bundle}/tools/forecast")]);
    both.failure(3);
    assert_eq!(
        both.stdout.matches("error[duplicate]").count(),
        2,
        "{}",
        both.stdout
    );
    // From outside the catalog, by absolute path: the same findings.
    let outside = env.run(&["validate", env.catalog().join(bundle).to_str().unwrap()]);
    outside.failure(3);
    assert_eq!(outside.stdout.matches("error[duplicate]").count(), 2);

    // A path with nothing there is an input file not found (exit 4), as for every command:
    // a CI job tells a mistyped path from a catalog with problems (exit 3).
    let missing = env.json_error(&["validate", "no/such/file.json"], 4);
    assert_eq!(missing.error.code, "NOT_FOUND");
    assert!(
        missing.error.message.contains("no/such/file.json"),
        "{}",
        missing.error.message
    );
}

#[test]
fn a_bare_file_name_is_checked_with_its_catalogs_host_policy() {
    let env = catalog_with(Some("host"));
    let folder = env
        .catalog()
        .join("bundles/0190c000-0000-7000-8000-0000000000b1/tools/elsewhere/v1");
    let mut cmd = env.bare_command();
    cmd.current_dir(&folder).args(["validate", "tool.json"]);
    let run = Run::of(cmd, None);
    run.failure(3);
    assert_eq!(
        run.stdout,
        "tool.json:36:5: error[host]: host 'api.other.test' of urlTemplate is not in allowedHosts of toolctl.json (at /impl/urlTemplate)\n1 error and 0 warnings in 1 file\n"
    );
}

#[test]
fn a_file_outside_any_catalog_is_checked_on_its_own() {
    let env = catalog_with(None);
    let file = env.root().join("inputs/forecast.json");
    let source = env
        .catalog()
        .join("bundles/0190c000-0000-7000-8000-0000000000b1/tools/forecast/v1/tool.json");
    std::fs::copy(source, &file).unwrap();
    let run = in_catalog(&env, &["validate", file.to_str().unwrap()]);
    run.success();
    // A file named otherwise is what its fields say: `type` makes this one a tool (a slug
    // alone would be a bundle's, as `bundle put --file` reads it).
    std::fs::write(&file, "{\"slug\": 1, \"type\": \"native\"}").unwrap();
    let bad = in_catalog(&env, &["validate", file.to_str().unwrap()]);
    bad.failure(3);
    assert!(
        bad.stdout
            .contains(":1:1: error[schema]: required field 'version' is missing (at /version)"),
        "{}",
        bad.stdout
    );
    assert!(
        bad.stdout
            .contains(":1:2: error[schema]: 1 is not of type \"string\" (at /slug)"),
        "{}",
        bad.stdout
    );
}

#[test]
fn provider_limits_are_warnings_for_the_providers_asked_for() {
    let env = catalog_with(None);
    let bundle_dir = env
        .catalog()
        .join("bundles/0190c000-0000-7000-8000-0000000000b1/tools");
    let template: Value = serde_json::from_str(
        &std::fs::read_to_string(bundle_dir.join("clock/v1/tool.json")).unwrap(),
    )
    .unwrap();
    for i in 0..130 {
        let mut doc = template.clone();
        doc["slug"] = format!("clock-{i}").into();
        doc["toolID"] = format!("0190c000-0000-7000-8000-0000001{i:05}").into();
        let dir = bundle_dir.join(format!("clock-{i}/v1"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("tool.json"), serde_json::to_vec(&doc).unwrap()).unwrap();
    }
    in_catalog(&env, &["validate"]).success();
    let run = in_catalog(
        &env,
        &[
            "validate",
            "--provider",
            "openai",
            "--provider",
            "anthropic",
        ],
    );
    run.success();
    assert!(
        run.stdout.contains("toolctl.json: warning[provider-limit]: 135 tools are enabled, more than openai takes in one request (128); send a few with `toolctl pick` or export a subset (--bundle, --tag)\n"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("anthropic takes"), "{}", run.stdout);
}

#[test]
fn schema_prints_the_schemas_kept_in_the_repository() {
    let env = TestEnv::new();
    for (name, file) in [
        ("config", "toolctl.schema.json"),
        ("bundle", "bundle.schema.json"),
        ("tool", "tool.schema.json"),
    ] {
        let run = env.run(&["schema", name]);
        run.success();
        let kept = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("schemas")
                .join(file),
        )
        .unwrap();
        assert_eq!(run.stdout, kept, "{name}");
        let doc: Value = serde_json::from_str(&run.stdout).unwrap();
        assert!(jsonschema::meta::is_valid(&doc), "{name}");
    }
    env.run(&["schema", "agent"]).failure(2);
}

#[test]
fn tool_new_writes_a_skeleton_that_validates_as_it_is() {
    let env = catalog_with(None);
    let path = in_catalog(&env, &["tool", "new", "weather", "radar"]);
    path.success();
    let file = PathBuf::from(path.stdout.trim());
    assert!(
        file.ends_with("tools/radar/v1/tool.json"),
        "{}",
        path.stdout
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(doc["$schema"], "../../../../../schemas/tool.schema.json");
    assert_eq!(doc["isEnabled"], false);
    assert_eq!(doc["type"], "http");
    assert_eq!(
        doc["impl"]["urlTemplate"],
        "https://api.example.test/v1/search?q=${query}"
    );
    // "$schema" resolves: the catalog holds the schema it names.
    let schema = file
        .parent()
        .unwrap()
        .join(doc["$schema"].as_str().unwrap());
    assert_eq!(
        std::fs::read_to_string(schema).unwrap(),
        schemas::Kind::Tool.text()
    );
    in_catalog(
        &env,
        &[
            "tool",
            "new",
            "weather",
            "ticker",
            "--type",
            "native",
            "--version",
            "2026.1",
        ],
    )
    .success();
    in_catalog(
        &env,
        &[
            "tool",
            "new",
            "weather",
            "hook",
            "--url",
            "https://api.example.test/hook",
        ],
    )
    .success();
    let run = in_catalog(&env, &["validate", "--strict"]);
    run.success();
    assert_eq!(run.stdout, "7 files checked: no problems\n");
    // Disabled until someone enables it; then it is a tool like any other.
    assert!(
        !env.json(&["tool", "list"])
            .to_string()
            .contains("weather/radar@v1")
    );
    env.run(&["tool", "enable", "weather/radar"]).success();
    assert!(
        env.json(&["tool", "list"])
            .to_string()
            .contains("weather/radar@v1")
    );

    let taken = env.json_error(&["tool", "new", "weather", "radar"], 5);
    assert_eq!(taken.error.code, "CONFLICT");
    let bad_slug = env.json_error(&["tool", "new", "weather", "no_underscores"], 3);
    assert!(
        bad_slug.error.message.contains("underscore"),
        "{}",
        bad_slug.error.message
    );
    env.json_error(&["tool", "new", "nope", "radar2"], 4);
    let bad_func = env.json_error(
        &[
            "tool", "new", "weather", "x", "--type", "native", "--func", "nope",
        ],
        3,
    );
    assert!(
        bad_func.error.message.contains("--func nope"),
        "{}",
        bad_func.error.message
    );
    let bad_host = env.json_error(
        &["tool", "new", "weather", "y", "--url", "https://evil.test/"],
        3,
    );
    assert!(
        bad_host.error.message.contains("allowedHosts"),
        "{}",
        bad_host.error.message
    );

    let empty = TestEnv::new();
    empty.bundle("b");
    let no_host = empty.json_error(&["tool", "new", "b", "z"], 3);
    assert!(
        no_host.error.message.contains("allowedHosts"),
        "{}",
        no_host.error.message
    );
}

/// GitHub's runner also reads the older `##[command]` form anywhere in a line, and strips
/// leading spaces before `::`: a finding writes `##[` as `#\u0023[`, and a warning
/// (here `export`'s, over a folder whose name holds a newline) is one line.
#[test]
fn no_workflow_command_from_a_file_in_a_finding_or_a_warning() {
    let env = TestEnv::new();
    let id = env.bundle("b");
    let name = "##[error file=README.md;line=1]owned";
    env.put_tool(
        "b",
        &crate::common::tool_doc_with(
            "legacy",
            "v1",
            serde_json::json!({
                "description": "An argument named like the runner's older command form.",
                "argSchema": { "type": "object", "properties": { name: { "type": "string" } } }
            }),
        ),
    );
    let run = env.run(&["validate", "--strict"]);
    assert!(
        run.stdout
            .contains("argument '#\\u0023[error file=README.md;line=1]owned' has no description"),
        "{run}"
    );
    assert!(!run.stdout.contains("##["), "{run}");

    let odd = env
        .bundle_dir(&id)
        .join("tools")
        .join("x\n  ::error file=a::owned")
        .join("v1");
    std::fs::create_dir_all(&odd).unwrap();
    std::fs::write(odd.join("tool.json"), "{").unwrap();
    let run = env.run(&["export", "--provider", "openai"]);
    assert!(run.stderr.contains("warning:"), "{run}");
    for line in run.stderr.lines() {
        assert!(!line.trim_start().starts_with("::"), "{line:?}\n{run}");
    }
}

/// The github format writes `##[` as the human one does, `#\u0023[`, not only what GitHub's
/// toolkit escapes (an argument named `…\n##[error]y` would come out as the runner's older
/// command form). Every line is one annotation or the summary.
#[test]
fn the_github_format_writes_the_older_command_form_as_the_human_one_does() {
    let env = TestEnv::new();
    let name = "x%0A::error::pwn\n##[error]y";
    put_with_argument_named(
        &env,
        "legacy",
        "An argument named like a workflow command.",
        name,
    );
    let human = env.run(&["validate", "--strict"]);
    human.stdout_has("#\\u0023[error]y");
    let github = env.run(&["validate", "--strict", "--format", "github"]);
    github.stdout_has("x%250A::error::pwn%0A#\\u0023[error]y' has no description");
    assert!(!github.stdout.contains("##["), "{github}");
    let lines: Vec<&str> = github.stdout.lines().collect();
    let (summary, annotations) = lines.split_last().unwrap();
    assert!(summary.ends_with(" in 3 files"), "{github}");
    assert_eq!(annotations.len(), 1, "{github}");
    assert!(
        annotations[0].starts_with("::error file="),
        "{:?}\n{github}",
        annotations[0]
    );
}
