//! `toolctl export`: the catalog's tools in each provider's request format, checked against
//! what the providers really accept and against the catalog they came from.
//!
//! - **Goldens**: the fixture catalog (`fixtures/catalog`, copied to a temporary folder so its
//!   index is not written into the repository) exported for every provider is compared with
//!   `tests/golden/export/<name>.json` — as JSON values, key order included — and, for runs with
//!   `--lenient`, the refs left out with `<name>.left-out.json`. Before any comparison the output
//!   must pass the provider's own rules ([`check_shape`]: wrapper, names, Gemini's schema
//!   subset, OpenAI strict mode) and, for the providers that take JSON Schema as it is, carry
//!   each tool's `argSchema` verbatim. When the export changes on purpose, regenerate with
//!   `UPDATE_GOLDEN=1 cargo test --test cli test_export::golden`, then read the diff: a golden is
//!   what users send to real APIs. An output that breaks a provider's rules is never written.
//! - **One case per rule**: names, OpenAI Chat and Responses, the 128-tool limit, strict mode,
//!   Anthropic, Gemini, Ollama, MCP, schema fidelity — each on a small catalog made for it.
//! - **Round trip**: every exported name resolves back to its own tool in `toolctl invoke` and
//!   `toolctl tool get`.
//! - **Filters**: `--bundle`, `--tag`, `--tool`, `--include-disabled`, one version per slug.

use crate::common::{ErrorDoc, TestEnv, find_files, keys, ordered, tool_doc_with};
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every `--provider`.
const PROVIDERS: [&str; 6] = [
    "openai",
    "openai-responses",
    "anthropic",
    "ollama",
    "gemini",
    "mcp",
];

/// The providers that take JSON Schema as it is: the canonical schema goes out verbatim.
const VERBATIM: [&str; 5] = ["openai", "openai-responses", "anthropic", "ollama", "mcp"];

/// The fixture catalog's default export, in registration order (`createdAt`): each exported
/// name and the tool it stands for. 25 = 28 fixture tools − 2 older `forecast` versions −
/// the disabled `image-search` − 3 tools of the disabled
/// `finance` bundle, + the 3 built-ins enabled by default (`exec` is not).
const FIXTURE_EXPORT: &[(&str, &str)] = &[
    ("web-search", "search/web-search@v1"),
    ("news-search", "search/news-search@v1"),
    ("current-conditions", "weather/current-conditions@v1"),
    ("search-issues", "github/search-issues@v1"),
    ("get-repo", "github/get-repo@v1"),
    ("list-pull-requests", "github/list-pull-requests@v1"),
    ("create-issue", "github/create-issue@v1"),
    ("air-quality", "weather/air-quality@v1"),
    ("get-pull-request", "github/get-pull-request@v1"),
    ("list-events", "calendar/list-events@v1"),
    ("create-event", "calendar/create-event@v1"),
    ("update-event", "calendar/update-event@v1"),
    ("delete-event", "calendar/delete-event@v1"),
    ("weather-alerts", "weather/weather-alerts@v1"),
    ("readfile", "builtin/readfile@v1"),
    ("file-search", "builtin/file-search@v1"),
    ("now", "builtin/now@v1"),
    ("add-issue-comment", "github/add-issue-comment@v1"),
    ("read-notes", "files/read-notes@v1"),
    ("find-docs", "files/find-docs@v1"),
    ("current-time", "files/current-time@v1"),
    ("read-config", "files/read-config@v1"),
    ("define-word", "search/define-word@v1"),
    ("find-free-time", "calendar/find-free-time@v1"),
    ("forecast", "weather/forecast@v2.1"),
];

/// What OpenAI strict mode cannot take in the fixture catalog: a `uniqueItems` and an optional
/// property that is already nullable (`create-issue`), a `dependentRequired` (`air-quality`),
/// optional nullable properties (`update-event`).
const FIXTURE_NOT_STRICT: [&str; 3] = [
    "github/create-issue@v1",
    "weather/air-quality@v1",
    "calendar/update-event@v1",
];

/// What OpenAI (not strict, Chat and Responses), Anthropic, MCP and Gemini cannot take in the
/// fixture catalog: nothing. `air-quality` says "a city, or both lat and lon" the portable way
/// (`dependentRequired`, no root `oneOf`; the refusal of a root `oneOf` is tested with
/// `tests/fixtures/export/root-one-of.tool.json`), and Gemini's view states `uniqueItems` and
/// `dependentRequired` in descriptions.
const FIXTURE_NOT_OBJECT_ROOT: [&str; 0] = [];
const FIXTURE_NOT_GEMINI: [&str; 0] = [];

/// The formats OpenAI strict mode accepts.
const STRICT_FORMATS: [&str; 9] = [
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

// ---------------------------------------------------------------------------------------------
// Goldens: the fixture catalog for every provider.

// The fixture catalog exports to every provider without `--lenient` (only strict mode leaves
// tools out).
#[test]
fn golden_openai() {
    let left_out = golden("openai", &["--provider", "openai"]);
    assert_eq!(left_out, FIXTURE_NOT_OBJECT_ROOT);
}

#[test]
fn golden_openai_responses() {
    let left_out = golden("openai-responses", &["--provider", "openai-responses"]);
    assert_eq!(left_out, FIXTURE_NOT_OBJECT_ROOT);
}

#[test]
fn golden_openai_strict() {
    let left_out = golden(
        "openai-strict",
        &["--provider", "openai", "--strict", "--lenient"],
    );
    assert_eq!(left_out, FIXTURE_NOT_STRICT);
}

#[test]
fn golden_anthropic() {
    let left_out = golden("anthropic", &["--provider", "anthropic"]);
    assert_eq!(left_out, FIXTURE_NOT_OBJECT_ROOT);
}

#[test]
fn golden_ollama() {
    golden("ollama", &["--provider", "ollama"]);
}

#[test]
fn golden_gemini() {
    let left_out = golden("gemini", &["--provider", "gemini"]);
    assert_eq!(left_out, FIXTURE_NOT_GEMINI);
}

#[test]
fn golden_mcp() {
    let left_out = golden("mcp", &["--provider", "mcp"]);
    assert_eq!(left_out, FIXTURE_NOT_OBJECT_ROOT);
}

#[test]
fn a_root_one_of_is_refused_by_all_but_ollama_naming_keyword_and_pointer() {
    let env = TestEnv::new();
    env.bundle("b");
    let doc: Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("tests/fixtures/export/root-one-of.tool.json"))
            .unwrap(),
    )
    .unwrap();
    env.put_tool("b", &doc);
    for provider in PROVIDERS {
        let args = ["export", "--provider", provider, "--bundle", "b"];
        if provider == "ollama" {
            env.run(&args).success();
            continue;
        }
        let error = env.json_error(&args, 3);
        let refused = refused_problems(&error);
        let problems = &refused["b/air-quality-one-of@v1"];
        assert!(
            problems
                .iter()
                .any(|(k, p, _)| k == "oneOf" && p == "/argSchema"),
            "{provider}: {problems:#?}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Names.

// ---------------------------------------------------------------------------------------------
// Round trip: exported names resolve back in `invoke` and `tool get`.

// ---------------------------------------------------------------------------------------------
// OpenAI: Chat Completions and Responses, the tool limit.

// ---------------------------------------------------------------------------------------------
// OpenAI strict mode: a transformed copy of the schema.

// ---------------------------------------------------------------------------------------------
// Anthropic.

// ---------------------------------------------------------------------------------------------
// Gemini: an OpenAPI 3.0 subset in `functionDeclarations`.

// ---------------------------------------------------------------------------------------------
// Ollama.

// ---------------------------------------------------------------------------------------------
// MCP.

// ---------------------------------------------------------------------------------------------
// Schema fidelity: the canonical schema is sent as it is, and never changed.

// ---------------------------------------------------------------------------------------------
// Filters and which tools go out.

// ---------------------------------------------------------------------------------------------
// Helpers.

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `toolctl export ARGS`, which must succeed with nothing on stderr; the parsed output.
#[track_caller]
fn export(env: &TestEnv, args: &[&str]) -> Value {
    let mut all = vec!["export"];
    all.extend_from_slice(args);
    let run = env.run(&all);
    run.success();
    assert_eq!(run.stderr, "", "{run}");
    run.json()
}

/// `toolctl export ARGS` (with `--lenient`), which must succeed with nothing on stderr but the
/// warnings for the tools left out; the parsed output and the refs left out.
#[track_caller]
fn export_lenient(env: &TestEnv, args: &[&str]) -> (Value, Vec<String>) {
    assert!(args.contains(&"--lenient"), "{args:?}");
    let mut all = vec!["export"];
    all.extend_from_slice(args);
    let run = env.run(&all);
    run.success();
    let other: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| !l.starts_with("warning: left out "))
        .collect();
    assert_eq!(other, Vec::<&str>::new(), "{run}");
    (run.json(), left_out_refs(&run.stderr))
}

/// The fixture tools `provider` cannot take as they are (not in strict mode): what
/// `--lenient` leaves out of the default export.
fn fixture_not_taken(provider: &str) -> &'static [&'static str] {
    match provider {
        "ollama" => &[],
        "gemini" => &FIXTURE_NOT_GEMINI,
        _ => &FIXTURE_NOT_OBJECT_ROOT,
    }
}

/// The provider's entries (Gemini's are inside its one `functionDeclarations` object).
#[track_caller]
fn entries<'a>(provider: &str, list: &'a Value) -> &'a [Value] {
    let list = list
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {list}"));
    if provider == "gemini" {
        assert_eq!(list.len(), 1, "Gemini takes one tools object: {list:?}");
        assert_eq!(keys(&list[0]), ["functionDeclarations"]);
        return list[0]["functionDeclarations"].as_array().unwrap();
    }
    list
}

/// The part of an entry holding name and description.
fn function<'a>(provider: &str, entry: &'a Value) -> &'a Value {
    if provider == "openai" || provider == "ollama" {
        &entry["function"]
    } else {
        entry
    }
}

/// The arguments schema of an entry.
fn schema_of<'a>(provider: &str, entry: &'a Value) -> Option<&'a Value> {
    let key = match provider {
        "anthropic" => "input_schema",
        "mcp" => "inputSchema",
        _ => "parameters",
    };
    function(provider, entry).get(key)
}

/// The exported names, in order.
fn names_of<'a>(provider: &str, list: &'a Value) -> Vec<&'a str> {
    entries(provider, list)
        .iter()
        .map(|e| function(provider, e)["name"].as_str().unwrap())
        .collect()
}

/// The descriptions, in order.
fn descriptions<'a>(provider: &str, list: &'a Value) -> Vec<&'a str> {
    entries(provider, list)
        .iter()
        .map(|e| function(provider, e)["description"].as_str().unwrap())
        .collect()
}

/// The entry exported as `name`.
#[track_caller]
fn entry_named<'a>(provider: &str, list: &'a Value, name: &str) -> &'a Value {
    entries(provider, list)
        .iter()
        .find(|e| function(provider, e)["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {list:#}"))
}

/// A tool whose description is `bundle/slug`, so an export says which tool each entry is.
fn marked(bundle: &str, slug: &str) -> Value {
    with_schema(
        slug,
        &format!("{bundle}/{slug}"),
        &json!({
            "type": "object",
            "properties": { "q": { "type": "string" } },
            "required": ["q"],
            "additionalProperties": false
        }),
    )
}

/// A native tool with this description and argSchema.
fn with_schema(slug: &str, description: &str, schema: &Value) -> Value {
    tool_doc_with(
        slug,
        "v1",
        json!({ "description": description, "argSchema": schema }),
    )
}

/// `bundle/slug` → exported name, for tools made by [`marked`].
#[track_caller]
fn names_by_tool(env: &TestEnv, provider: &str, extra: &[&str]) -> BTreeMap<String, String> {
    let mut args = vec!["--provider", provider];
    args.extend_from_slice(extra);
    let list = export(env, &args);
    entries(provider, &list)
        .iter()
        .map(|e| function(provider, e))
        // Made by `marked`: `bundle/slug`, no spaces (built-ins have sentences).
        .filter(|f| {
            f["description"]
                .as_str()
                .is_some_and(|d| d.contains('/') && !d.contains(' '))
        })
        .map(|f| {
            (
                f["description"].as_str().unwrap().to_owned(),
                f["name"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// The tools of [`names_env`]: a slug shared by four bundles (two of them with long slugs, so
/// the prefixed names are cut and then collide), a folded slug and two CJK slugs that collide once transliterated.
fn names_env_tools() -> Vec<(String, String)> {
    let long = "l".repeat(60);
    let b64 = "b".repeat(64);
    [
        ("web", "search"),
        ("news", "search"),
        (&long, "search"),
        (&b64, "search"),
        ("web", "fetch"),
        (&b64, "fetch"),
        ("web", "météo"),
        ("cjk", "天气"),
        ("cjk", "天氣"),
    ]
    .iter()
    .map(|(b, s)| ((*b).to_owned(), (*s).to_owned()))
    .collect()
}

/// A catalog exercising every naming rule at once.
fn names_env() -> TestEnv {
    let env = TestEnv::new();
    let mut made = BTreeSet::new();
    for (bundle, slug) in names_env_tools() {
        if made.insert(bundle.clone()) {
            env.bundle(&bundle);
        }
        // `tool put` refuses names that collide: they come as `git pull` brings them.
        env.put_tool_pulled(&bundle, &marked(&bundle, &slug));
    }
    env
}

/// `stem` cut to leave room for `_` and 6 hex digits of SHA-256("bundle/slug").
fn hashed(stem: &str, bundle: &str, slug: &str) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(format!("{bundle}/{slug}"));
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    let stem: String = stem.chars().take(64 - 1 - 6).collect();
    format!("{stem}_{}", &hex[..6])
}

#[track_caller]
fn assert_valid_name(name: &str) {
    let valid = (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    assert!(valid, "{name:?} is not ^[a-zA-Z0-9_-]{{1,64}}$");
}

/// ref → toolID of every tool.
fn tool_ids(env: &TestEnv) -> BTreeMap<String, String> {
    env.tool_list(&["--include-disabled", "--page-size", "1000"])
        .items
        .into_iter()
        .map(|t| (t.reference, t.tool_id))
        .collect()
}

/// Check that the exported `name` stands for `reference` (whose toolID is `tool_id`): `invoke
/// NAME` is never UNKNOWN_TOOL and its error names the tool; `tool get NAME` is the same tool.
/// The call is made with an argument no closed schema takes, so nothing runs unless the
/// tool's schema takes any keys; returns whether the tool ran.
#[track_caller]
fn resolves_back(env: &TestEnv, name: &str, reference: &str, tool_id: &str) -> bool {
    let run = env.run(&[
        "--json",
        "invoke",
        name,
        "--args",
        r#"{"__not_an_argument": 1}"#,
    ]);
    assert_ne!(run.status, Some(4), "{name} did not resolve\n{run}");
    let doc = run.json();
    let ran = doc["ok"] == true;
    if !ran {
        let message = doc["error"]["message"].as_str().unwrap();
        assert!(
            message.starts_with(&format!("{reference}:"))
                || message.starts_with(&format!("{reference} ")),
            "{name} should stand for {reference}\n{run}"
        );
        assert_eq!(doc["error"]["code"], "VALIDATION_ERROR", "{run}");
    }
    let got = env.json(&["tool", "get", name]);
    assert_eq!(got["ref"], reference, "tool get {name}");
    assert_eq!(got["toolID"], tool_id, "tool get {name}");
    ran
}

/// Refs left out by `--lenient`, from the warnings on stderr, each once, in order.
fn left_out_refs(stderr: &str) -> Vec<String> {
    let mut refs: Vec<String> = Vec::new();
    for line in stderr.lines() {
        let Some(rest) = line.strip_prefix("warning: left out ") else {
            continue;
        };
        let reference = rest.split(" (").next().unwrap().to_owned();
        if !refs.contains(&reference) {
            refs.push(reference);
        }
    }
    refs
}

/// ref → its problems (keyword, pointer, message), from an export's VALIDATION_ERROR.
#[track_caller]
fn refused_problems(error: &ErrorDoc) -> BTreeMap<String, Vec<(String, String, String)>> {
    assert_eq!(error.error.code, "VALIDATION_ERROR");
    let tools = error.error.details["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{:#?}", error.error));
    tools
        .iter()
        .map(|t| {
            assert_eq!(keys(t), ["ref", "problems"]);
            let problems = t["problems"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| {
                    assert_eq!(keys(p), ["keyword", "pointer", "message"]);
                    let s = |k: &str| p[k].as_str().unwrap().to_owned();
                    (s("keyword"), s("pointer"), s("message"))
                })
                .collect();
            (t["ref"].as_str().unwrap().to_owned(), problems)
        })
        .collect()
}

/// The Gemini parameters of the tool exported as `name` (bundle `b`).
#[track_caller]
fn gemini_parameters(env: &TestEnv, name: &str) -> Value {
    let list = export(
        env,
        &["--provider", "gemini", "--tool", &format!("b/{name}")],
    );
    let entry = entry_named("gemini", &list, name);
    let parameters = entry["parameters"].clone();
    assert_eq!(
        gemini_violations(&parameters, ""),
        Vec::<String>::new(),
        "{parameters:#}"
    );
    parameters
}

/// A closed object schema for a weather call, keys in a deliberate order.
fn weather_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "city": { "type": "string", "description": "City name." },
            "days": { "type": "integer", "minimum": 1, "maximum": 7, "default": 3 }
        },
        "required": ["city"],
        "additionalProperties": false
    })
}

/// [`weather_schema`] in OpenAI strict mode.
fn weather_schema_strict() -> Value {
    json!({
        "type": "object",
        "properties": {
            "city": { "type": "string", "description": "City name." },
            "days": { "type": ["integer", "null"], "minimum": 1, "maximum": 7 }
        },
        "required": ["city", "days"],
        "additionalProperties": false
    })
}

/// An object schema nesting `levels` objects (itself included): `l2` inside it, `l3` inside
/// that…, every property required.
fn nested(levels: usize) -> Value {
    let mut inner = json!({ "type": "object", "properties": { "leaf": { "type": "string" } }, "required": ["leaf"] });
    for level in (2..=levels).rev() {
        inner = json!({ "type": "object", "properties": { format!("l{level}"): inner }, "required": [format!("l{level}")] });
    }
    inner
}

/// How many object levels a schema nests (the root is 1).
fn json_depth(schema: &Value) -> usize {
    let own = usize::from(schema.get("type").is_some_and(|t| {
        t == "object" || t.as_array().is_some_and(|a| a.contains(&json!("object")))
    }));
    let inner = schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|p| p.values())
        .chain(schema.get("items"))
        .map(json_depth)
        .max()
        .unwrap_or(0);
    own + inner
}

/// A catalog with bundle `h` holding HTTP tools of every method, their host allowed.
fn http_env() -> TestEnv {
    let env = TestEnv::new();
    env.edit_config(|config| config["allowedHosts"] = json!(["api.example.com"]));
    env.bundle("h");
    for method in ["GET", "HEAD", "OPTIONS", "PUT", "DELETE", "POST", "PATCH"] {
        env.put_tool("h", &http_tool(&method.to_lowercase(), method));
    }
    env
}

fn http_tool(slug: &str, method: &str) -> Value {
    json!({
        "slug": slug,
        "version": "v1",
        "description": format!("{method} a thing."),
        "type": "http",
        "impl": { "method": method, "urlTemplate": "https://api.example.com/things/${id}" },
        "argSchema": {
            "type": "object",
            "properties": { "id": { "type": "string" } },
            "required": ["id"],
            "additionalProperties": false
        }
    })
}

/// Write a tool file by hand, as a person with an editor would (`tool put` is slow for 126
/// tools, and refuses a tool without argSchema). `n` makes its toolID unique.
fn write_tool_file(env: &TestEnv, bundle_id: &str, n: usize, slug: &str, schema: Option<Value>) {
    let mut doc = json!({
        "schemaVersion": "1",
        "toolID": format!("01900000-0000-7000-8000-{n:012x}"),
        "bundleID": bundle_id,
        "slug": slug,
        "version": "v1",
        "description": format!("Hand-written tool {n}."),
        "type": "native",
        "impl": { "func": "now" },
        "createdAt": "2024-06-01T00:00:00Z",
        "modifiedAt": "2024-06-01T00:00:00Z"
    });
    if let Some(schema) = schema {
        doc["argSchema"] = schema;
    }
    let path = env.tool_file(bundle_id, slug, "v1");
    crate::common::write_file(&path, &serde_json::to_string_pretty(&doc).unwrap());
}

/// Every file of the catalog (outside its derived `.toolctl` state) and its bytes.
fn catalog_files(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![root.to_owned()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if !path.ends_with(".toolctl") {
                    stack.push(path);
                }
            } else {
                files.insert(path.clone(), std::fs::read(&path).unwrap());
            }
        }
    }
    files
}

/// JSON text without the whitespace between tokens (strings untouched), so a compact
/// serialisation can be found in pretty-printed output.
fn squeeze(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in text.chars() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if !c.is_whitespace() {
            out.push(c);
        }
    }
    out
}

// --- Goldens -----------------------------------------------------------------------------------

/// Export the fixture catalog with `args`, check the output against the provider's rules, then
/// compare it with `tests/golden/export/<name>.json` (and, with `--lenient`, the refs left out
/// with `<name>.left-out.json`); with `UPDATE_GOLDEN=1`, write them instead. Returns the refs
/// left out.
#[track_caller]
fn golden(name: &str, args: &[&str]) -> Vec<String> {
    let env = TestEnv::fixture();
    let provider = args[args.iter().position(|a| *a == "--provider").unwrap() + 1];
    let strict = args.contains(&"--strict");
    let lenient = args.contains(&"--lenient");
    let mut all = vec!["export"];
    all.extend_from_slice(args);
    let run = env.run(&all);
    run.success();
    let got = run.json();
    let left_out = left_out_refs(&run.stderr);
    let other_stderr: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| !l.starts_with("warning: left out "))
        .collect();
    assert_eq!(other_stderr, Vec::<&str>::new(), "{run}");

    check_shape(provider, &got, strict);
    if VERBATIM.contains(&provider) && !strict {
        let canonical = fixture_schemas(&env);
        for entry in entries(provider, &got) {
            let name = function(provider, entry)["name"].as_str().unwrap();
            let schema = schema_of(provider, entry).unwrap();
            assert_eq!(
                ordered(schema),
                ordered(&canonical[name]),
                "{provider} {name}: not verbatim"
            );
        }
    }
    compare_golden(&format!("{name}.json"), &got);
    if lenient {
        compare_golden(&format!("{name}.left-out.json"), &json!(left_out));
    } else {
        assert_eq!(left_out, Vec::<String>::new());
    }
    left_out
}

/// Exported name → canonical argSchema (key order as in the file) of the fixture's default
/// export.
fn fixture_schemas(env: &TestEnv) -> BTreeMap<String, Value> {
    let files = find_files(env.catalog(), "tool.json");
    FIXTURE_EXPORT
        .iter()
        .map(|(name, reference)| {
            let (path, version) = reference.split_once('@').unwrap();
            let (bundle, slug) = path.split_once('/').unwrap();
            let schema = if bundle == "builtin" {
                env.json(&["tool", "get", reference])["document"]["argSchema"].clone()
            } else {
                let suffix = PathBuf::from("tools")
                    .join(slug)
                    .join(version)
                    .join("tool.json");
                let file = files.iter().find(|f| f.ends_with(&suffix)).unwrap();
                let doc: Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
                doc["argSchema"].clone()
            };
            ((*name).to_owned(), schema)
        })
        .collect()
}

#[track_caller]
fn compare_golden(file: &str, got: &Value) {
    let path = repo().join("tests/golden/export").join(file);
    if std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v == "1") {
        let text = serde_json::to_string_pretty(got).unwrap() + "\n";
        crate::common::write_file(&path, &text);
        return;
    }
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}\nwrite it with UPDATE_GOLDEN=1 cargo test --test cli test_export::golden",
            path.display()
        )
    });
    let want: Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    if ordered(got) == ordered(&want) {
        return;
    }
    let mut differences = Vec::new();
    diff(&want, got, String::new(), &mut differences);
    let shown: Vec<&String> = differences.iter().take(20).collect();
    panic!(
        "the export differs from {}{}:\n{}\n{}\nif the change is meant, regenerate with UPDATE_GOLDEN=1 cargo test --test cli test_export::golden and read the diff",
        path.display(),
        if differences.is_empty() {
            " in key order only"
        } else {
            ""
        },
        shown
            .iter()
            .map(|d| format!("  {d}"))
            .collect::<Vec<_>>()
            .join("\n"),
        if differences.len() > shown.len() {
            format!("  … and {} more", differences.len() - shown.len())
        } else {
            String::new()
        },
    );
}

/// Where `got` differs from `want`, as JSON pointers with both values.
fn diff(want: &Value, got: &Value, at: String, out: &mut Vec<String>) {
    match (want, got) {
        (Value::Object(w), Value::Object(g)) => {
            for (key, wv) in w {
                let here = format!("{at}/{key}");
                match g.get(key) {
                    Some(gv) => diff(wv, gv, here, out),
                    None => out.push(format!("{here}: missing (golden: {wv})")),
                }
            }
            for (key, gv) in g {
                if !w.contains_key(key) {
                    out.push(format!("{at}/{key}: not in the golden (got: {gv})"));
                }
            }
        }
        (Value::Array(w), Value::Array(g)) => {
            for (i, (wv, gv)) in w.iter().zip(g).enumerate() {
                diff(wv, gv, format!("{at}/{i}"), out);
            }
            if w.len() != g.len() {
                out.push(format!(
                    "{at}: {} items, the golden has {}",
                    g.len(),
                    w.len()
                ));
            }
        }
        _ if want != got => out.push(format!("{at}: {got}, the golden says {want}")),
        _ => {}
    }
}

/// The rules every entry of `provider`'s list must follow, whatever the
/// catalog: wrapper and keys, names, and the schema dialect the provider takes.
#[track_caller]
fn check_shape(provider: &str, list: &Value, strict: bool) {
    let entries = entries(provider, list);
    let mut names = BTreeSet::new();
    for entry in entries {
        let f = function(provider, entry);
        let name = f["name"].as_str().unwrap();
        assert_valid_name(name);
        assert!(names.insert(name), "{name} twice");
        assert!(f["description"].is_string(), "{entry}");
        let schema = schema_of(provider, entry);
        match provider {
            "openai" | "ollama" => {
                assert_eq!(keys(entry), ["type", "function"]);
                assert_eq!(entry["type"], "function");
                if strict {
                    assert_eq!(keys(f), ["name", "description", "parameters", "strict"]);
                    assert_eq!(f["strict"], true);
                } else {
                    assert_eq!(keys(f), ["name", "description", "parameters"]);
                }
            }
            "openai-responses" => {
                assert_eq!(
                    keys(entry),
                    ["type", "name", "description", "parameters", "strict"]
                );
                assert_eq!(entry["type"], "function");
                assert_eq!(entry["strict"], strict);
            }
            "anthropic" => {
                assert_eq!(keys(entry), ["name", "description", "input_schema"]);
                assert_eq!(entry["input_schema"]["type"], "object", "{name}");
            }
            "gemini" => {
                let k = keys(entry);
                assert!(
                    k == ["name", "description", "parameters"] || k == ["name", "description"],
                    "{name}: {k:?}"
                );
                if let Some(schema) = schema {
                    assert_eq!(schema["type"], "object", "{name}");
                    assert_eq!(
                        gemini_violations(schema, ""),
                        Vec::<String>::new(),
                        "{name}"
                    );
                }
            }
            "mcp" => {
                let allowed = [
                    "name",
                    "title",
                    "description",
                    "inputSchema",
                    "outputSchema",
                    "annotations",
                ];
                let k = keys(entry);
                let positions: Vec<usize> = k
                    .iter()
                    .map(|key| {
                        allowed
                            .iter()
                            .position(|a| a == key)
                            .unwrap_or_else(|| panic!("{name}: {key}"))
                    })
                    .collect();
                assert!(positions.windows(2).all(|w| w[0] < w[1]), "{name}: {k:?}");
                assert_eq!(entry["inputSchema"]["type"], "object", "{name}");
                if let Some(output) = entry.get("outputSchema") {
                    assert_eq!(output["type"], "object", "{name}");
                }
                if let Some(annotations) = entry.get("annotations") {
                    for (hint, value) in annotations.as_object().unwrap() {
                        assert!(
                            [
                                "title",
                                "readOnlyHint",
                                "destructiveHint",
                                "idempotentHint",
                                "openWorldHint"
                            ]
                            .contains(&hint.as_str()),
                            "{name}: {hint}"
                        );
                        assert!(hint == "title" || value.is_boolean(), "{name}: {hint}");
                    }
                }
            }
            other => panic!("unknown provider {other}"),
        }
        if strict {
            let schema = schema.unwrap();
            assert_eq!(
                strict_violations(schema),
                Vec::<String>::new(),
                "{name}: {schema:#}"
            );
        }
    }
}

/// What in `schema` breaks OpenAI strict mode, as "pointer: problem".
fn strict_violations(schema: &Value) -> Vec<String> {
    const UNSUPPORTED: &[&str] = &[
        "patternProperties",
        "unevaluatedProperties",
        "propertyNames",
        "minProperties",
        "maxProperties",
        "unevaluatedItems",
        "contains",
        "minContains",
        "maxContains",
        "uniqueItems",
        "oneOf",
        "allOf",
        "not",
        "default",
        "title",
        "$schema",
        "discriminator",
    ];
    fn walk(node: &Value, at: &str, depth: usize, out: &mut Vec<String>) {
        let Some(map) = node.as_object() else {
            out.push(format!("{at}: not a schema object"));
            return;
        };
        if map.contains_key("$ref") {
            if map.len() != 1 {
                out.push(format!("{at}: $ref with siblings"));
            }
            return;
        }
        for key in map.keys() {
            if UNSUPPORTED.contains(&key.as_str()) {
                out.push(format!("{at}: {key}"));
            }
        }
        let types: Vec<&str> = match map.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let mut depth = depth;
        if types.contains(&"object") {
            depth += 1;
            if depth > 5 {
                out.push(format!("{at}: nested {depth} levels deep"));
            }
            if map.get("additionalProperties") != Some(&json!(false)) {
                out.push(format!("{at}: additionalProperties is not false"));
            }
            let props: Vec<&String> = map
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().collect())
                .unwrap_or_default();
            let required: Vec<&str> = map
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let props_set: BTreeSet<&str> = props.iter().map(|p| p.as_str()).collect();
            let required_set: BTreeSet<&str> = required.iter().copied().collect();
            if props_set != required_set || required.len() != required_set.len() {
                out.push(format!(
                    "{at}: required {required:?} is not every property {props:?}"
                ));
            }
        }
        if types.contains(&"array") && !map.get("items").is_some_and(Value::is_object) {
            out.push(format!("{at}: array without typed items"));
        }
        if let Some(format) = map.get("format").and_then(Value::as_str)
            && !STRICT_FORMATS.contains(&format)
        {
            out.push(format!("{at}: format {format}"));
        }
        if let Some(pattern) = map.get("pattern").and_then(Value::as_str)
            && ["(?=", "(?!", "(?<=", "(?<!"]
                .iter()
                .any(|l| pattern.contains(l))
        {
            out.push(format!("{at}: look-around in pattern"));
        }
        for (name, prop) in map
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            walk(prop, &format!("{at}/properties/{name}"), depth, out);
        }
        if let Some(items) = map.get("items") {
            walk(items, &format!("{at}/items"), depth, out);
        }
        for (i, branch) in map
            .get("anyOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            walk(branch, &format!("{at}/anyOf/{i}"), depth, out);
        }
        for (name, def) in map
            .get("$defs")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            walk(def, &format!("{at}/$defs/{name}"), 0, out);
        }
    }
    let mut out = Vec::new();
    if schema.get("anyOf").is_some() {
        out.push("anyOf at the root".to_owned());
    }
    walk(schema, "", 0, &mut out);
    out
}

/// What in `schema` is outside Gemini's OpenAPI subset, as "pointer: problem".
fn gemini_violations(schema: &Value, at: &str) -> Vec<String> {
    const ALLOWED: &[&str] = &[
        "type",
        "format",
        "title",
        "description",
        "nullable",
        "enum",
        "maxItems",
        "minItems",
        "properties",
        "required",
        "minProperties",
        "maxProperties",
        "minLength",
        "maxLength",
        "pattern",
        "example",
        "anyOf",
        "propertyOrdering",
        "default",
        "items",
        "minimum",
        "maximum",
    ];
    const TYPES: &[&str] = &["string", "number", "integer", "boolean", "array", "object"];
    let mut out = Vec::new();
    let Some(map) = schema.as_object() else {
        return vec![format!("{at}: not a schema object")];
    };
    for (key, value) in map {
        if !ALLOWED.contains(&key.as_str()) {
            out.push(format!("{at}: {key}"));
        }
        match key.as_str() {
            "type" if !value.as_str().is_some_and(|t| TYPES.contains(&t)) => {
                out.push(format!("{at}: type {value}"));
            }
            "enum"
                if !value
                    .as_array()
                    .is_some_and(|v| v.iter().all(Value::is_string)) =>
            {
                out.push(format!("{at}: enum {value}"));
            }
            "required" => {
                let props = map.get("properties").and_then(Value::as_object);
                for name in value.as_array().into_iter().flatten() {
                    if !name
                        .as_str()
                        .is_some_and(|n| props.is_some_and(|p| p.contains_key(n)))
                    {
                        out.push(format!("{at}: required {name} is not a property"));
                    }
                }
            }
            _ => {}
        }
    }
    for (name, prop) in map
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        out.extend(gemini_violations(prop, &format!("{at}/properties/{name}")));
    }
    if let Some(items) = map.get("items") {
        out.extend(gemini_violations(items, &format!("{at}/items")));
    }
    for (i, branch) in map
        .get("anyOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        out.extend(gemini_violations(branch, &format!("{at}/anyOf/{i}")));
    }
    out
}

mod filters;
mod names;
mod openai;
mod other_providers;
mod sdk;
