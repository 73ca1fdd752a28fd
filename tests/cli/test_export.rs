//! `toolctl export`: the catalog's tools in each provider's request format, checked against
//! what the providers really accept (`PROVIDERS.md` of the project: every rule there is a case
//! here) and against the catalog they came from.
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

use crate::common::{ErrorDoc, TestEnv, find_files, keys, ordered, read_json, tool_doc_with};
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
/// name and the tool it stands for. 25 = 29 fixture tools − 2 older `forecast` versions −
/// the unavailable `weather-report` − the disabled `image-search` − 3 tools of the disabled
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
/// property that is already nullable (`create-issue`), a `oneOf` at the root (`air-quality`),
/// optional nullable properties (`update-event`).
const FIXTURE_NOT_STRICT: [&str; 3] = [
    "github/create-issue@v1",
    "weather/air-quality@v1",
    "calendar/update-event@v1",
];

/// What OpenAI (not strict, Chat and Responses), Anthropic and MCP cannot take in the fixture
/// catalog: a `oneOf` at the root (`air-quality`), which they answer with a 400. Ollama takes it.
const FIXTURE_NOT_OBJECT_ROOT: [&str; 1] = ["weather/air-quality@v1"];

/// What Gemini cannot take in the fixture catalog: `uniqueItems` (`create-issue`), and a root
/// `oneOf` whose branches overlap, which `anyOf` would not keep (`air-quality`).
const FIXTURE_NOT_GEMINI: [&str; 2] = ["github/create-issue@v1", "weather/air-quality@v1"];

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

#[test]
fn golden_openai() {
    let left_out = golden("openai", &["--provider", "openai", "--lenient"]);
    assert_eq!(left_out, FIXTURE_NOT_OBJECT_ROOT);
}

#[test]
fn golden_openai_responses() {
    let left_out = golden(
        "openai-responses",
        &["--provider", "openai-responses", "--lenient"],
    );
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
    let left_out = golden("anthropic", &["--provider", "anthropic", "--lenient"]);
    assert_eq!(left_out, FIXTURE_NOT_OBJECT_ROOT);
}

#[test]
fn golden_ollama() {
    golden("ollama", &["--provider", "ollama"]);
}

#[test]
fn golden_gemini() {
    let left_out = golden("gemini", &["--provider", "gemini", "--lenient"]);
    assert_eq!(left_out, FIXTURE_NOT_GEMINI);
}

#[test]
fn golden_mcp() {
    let left_out = golden("mcp", &["--provider", "mcp", "--lenient"]);
    assert_eq!(left_out, FIXTURE_NOT_OBJECT_ROOT);
}

// ---------------------------------------------------------------------------------------------
// Names.

#[test]
fn names_fold_diacritics_and_replace_characters_providers_refuse() {
    let env = TestEnv::new();
    env.bundle("b");
    // Hangul syllables decompose (NFD) into 2–3 jamo each, none of them ASCII: 22 syllables
    // make 66 characters to replace, cut to 64.
    let hangul = "한".repeat(22);
    for slug in [
        "météo",
        "Ångström-2",
        "天気予報",
        "Ωmega",
        "plain-Name-9",
        &hangul,
    ] {
        env.put_tool("b", &marked("b", slug));
    }
    let names = names_by_tool(&env, "openai", &[]);
    assert_eq!(
        names,
        map(&[
            ("b/météo", "meteo"),
            ("b/Ångström-2", "Angstrom-2"),
            ("b/天気予報", "____"),
            ("b/Ωmega", "_mega"),
            ("b/plain-Name-9", "plain-Name-9"),
            (&format!("b/{hangul}"), &"_".repeat(64)),
        ])
    );
    for name in names.values() {
        assert_valid_name(name);
    }
}

#[test]
fn a_slug_in_two_bundles_is_prefixed_by_bundle_and_others_are_not() {
    let env = TestEnv::new();
    for bundle in ["web", "news"] {
        env.bundle(bundle);
        env.put_tool(bundle, &marked(bundle, "search"));
    }
    env.put_tool("web", &marked("web", "fetch"));
    assert_eq!(
        names_by_tool(&env, "openai", &["--bundle", "web", "--bundle", "news"]),
        map(&[
            ("web/search", "web__search"),
            ("news/search", "news__search"),
            ("web/fetch", "fetch"),
        ])
    );
}

#[test]
fn a_prefixed_name_is_cut_to_64_characters() {
    let env = TestEnv::new();
    let long = "l".repeat(60);
    for bundle in [long.as_str(), "web"] {
        env.bundle(bundle);
        env.put_tool(bundle, &marked(bundle, "search"));
    }
    let names = names_by_tool(&env, "openai", &["--bundle", "web", "--bundle", &long]);
    // 60 + "__" + "se": the slug loses its end, the whole is 64.
    assert_eq!(
        names,
        map(&[
            (&format!("{long}/search"), &format!("{long}__se")),
            ("web/search", "web__search"),
        ])
    );
}

#[test]
fn names_that_still_collide_get_a_stable_suffix_within_64_characters() {
    let env = TestEnv::new();
    // Two CJK slugs that both become "__"; a slug and its diacritic twin; a 64-character bundle
    // slug whose prefixed names are both cut to the bundle slug alone.
    let b64 = "b".repeat(64);
    for bundle in ["cjk", "web", b64.as_str()] {
        env.bundle(bundle);
    }
    env.put_tool("cjk", &marked("cjk", "天气"));
    env.put_tool("cjk", &marked("cjk", "雨雪"));
    env.put_tool("cjk", &marked("cjk", "météo"));
    env.put_tool("cjk", &marked("cjk", "meteo"));
    for slug in ["search", "fetch"] {
        env.put_tool("web", &marked("web", slug));
        env.put_tool(&b64, &marked(&b64, slug));
    }
    let names = names_by_tool(
        &env,
        "openai",
        &["--bundle", "cjk", "--bundle", "web", "--bundle", &b64],
    );
    // The suffix is `_` and the first 6 hex digits of SHA-256("bundle/slug"): pinned, because a
    // name saved in a conversation must keep meaning the same tool in the next release.
    let expected = map(&[
        ("cjk/天气", &hashed("__", "cjk", "天气")),
        ("cjk/雨雪", &hashed("__", "cjk", "雨雪")),
        ("cjk/météo", &hashed("meteo", "cjk", "météo")),
        ("cjk/meteo", &hashed("meteo", "cjk", "meteo")),
        ("web/search", "web__search"),
        ("web/fetch", "web__fetch"),
        (&format!("{b64}/search"), &hashed(&b64, &b64, "search")),
        (&format!("{b64}/fetch"), &hashed(&b64, &b64, "fetch")),
    ]);
    assert_eq!(names, expected);
    assert_eq!(names[&format!("{b64}/search")].len(), 64);
    assert!(names[&format!("{b64}/search")].starts_with(&"b".repeat(57)));
    let unique: BTreeSet<&String> = names.values().collect();
    assert_eq!(unique.len(), names.len(), "{names:#?}");
    for name in names.values() {
        assert_valid_name(name);
    }
}

#[test]
fn names_are_the_same_for_every_provider() {
    let env = names_env();
    let openai = names_by_tool(&env, "openai", &[]);
    for provider in PROVIDERS {
        assert_eq!(names_by_tool(&env, provider, &[]), openai, "{provider}");
    }
}

#[test]
fn names_are_stable_across_runs_and_unrelated_changes() {
    let env = names_env();
    let first = env.run(&["export", "--provider", "openai"]);
    first.success();
    let again = env.run(&["export", "--provider", "openai"]);
    assert_eq!(
        again.stdout, first.stdout,
        "the same catalog gives the same bytes"
    );
    let before = names_by_tool(&env, "openai", &["--include-disabled"]);

    // Disable a tool, disable a bundle, add a tool of a new slug: nobody else is renamed.
    env.run(&["tool", "disable", "web/fetch"]).success();
    env.run(&["bundle", "disable", "news"]).success();
    env.put_tool("cjk", &marked("cjk", "brand-new"));
    let after = names_by_tool(&env, "openai", &["--include-disabled"]);
    let mut expected = before.clone();
    expected.insert("cjk/brand-new".to_owned(), "brand-new".to_owned());
    assert_eq!(after, expected);
    // Disabled tools are left out by default, but the others keep their (prefixed) names.
    let default = names_by_tool(&env, "openai", &[]);
    assert!(!default.contains_key("web/fetch") && !default.contains_key("news/search"));
    assert_eq!(default["web/search"], "web__search");

    // The same catalog built in the opposite order gives the same names.
    let reversed = TestEnv::new();
    let mut made = BTreeSet::new();
    for (bundle, slug) in names_env_tools().iter().rev() {
        if made.insert(bundle.clone()) {
            reversed.bundle(bundle);
        }
        reversed.put_tool(bundle, &marked(bundle, slug));
    }
    assert_eq!(names_by_tool(&reversed, "openai", &[]), before);
}

#[test]
fn a_second_bundle_with_the_same_slug_renames_the_first() {
    // Documented in `provider::names`: the bare slug would name two tools.
    let env = TestEnv::new();
    env.bundle("web");
    env.put_tool("web", &marked("web", "search"));
    assert_eq!(
        names_by_tool(&env, "openai", &["--bundle", "web"])["web/search"],
        "search"
    );
    env.bundle("news");
    env.put_tool("news", &marked("news", "search"));
    assert_eq!(
        names_by_tool(&env, "openai", &["--bundle", "web"])["web/search"],
        "web__search"
    );
}

// ---------------------------------------------------------------------------------------------
// Round trip: exported names resolve back in `invoke` and `tool get`.

#[test]
fn every_exported_name_of_the_fixture_resolves_back_for_every_provider() {
    let env = TestEnv::fixture();
    for provider in PROVIDERS {
        let list = export(&env, &["--provider", provider, "--lenient", "--quiet"]);
        let names = names_of(provider, &list);
        // Every tool the provider can take, under the same name whatever the provider.
        let not_taken = fixture_not_taken(provider);
        let kept: Vec<&str> = FIXTURE_EXPORT
            .iter()
            .filter(|(_, r)| !not_taken.contains(r))
            .map(|(name, _)| *name)
            .collect();
        assert_eq!(names, kept, "{provider}");
    }
    let ids = tool_ids(&env);
    let mut ran = Vec::new();
    for (name, reference) in FIXTURE_EXPORT {
        if resolves_back(&env, name, reference, &ids[*reference]) {
            ran.push(*reference);
        }
    }
    // Only the tool whose schema takes any keys ran (it reads the clock).
    assert_eq!(ran, ["files/current-time@v1"]);
}

#[test]
fn prefixed_cut_hashed_and_folded_names_resolve_back_for_every_provider() {
    let env = names_env();
    let ids = tool_ids(&env);
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    for provider in PROVIDERS {
        for (tool, name) in names_by_tool(&env, provider, &[]) {
            seen.insert(name, tool);
        }
    }
    assert_eq!(seen.len(), names_env_tools().len(), "{seen:#?}");
    for (name, tool) in &seen {
        let reference = format!("{tool}@v1");
        let ran = resolves_back(&env, name, &reference, &ids[&reference]);
        assert!(!ran, "{reference} ran with an argument its schema refuses");
    }
}

/// Regression: an exported name that is also the bare slug of tools in two other bundles
/// (`a/meteo` and `b/meteo` are exported as `a__meteo` and `b__meteo`; `c/météo` folds to
/// `meteo`) must resolve to its own tool, not fail as ambiguous. `provider::names` gives such a
/// name the hash suffix, so it is never read as the other tools' slug; every exported name then
/// resolves back to its own tool.
#[test]
fn an_exported_name_equal_to_a_prefixed_slug_resolves_to_its_own_tool() {
    let env = TestEnv::new();
    for (bundle, slug) in [("a", "meteo"), ("b", "meteo"), ("c", "météo")] {
        env.bundle(bundle);
        env.put_tool(bundle, &marked(bundle, slug));
    }
    let names = names_by_tool(
        &env,
        "openai",
        &["--bundle", "a", "--bundle", "b", "--bundle", "c"],
    );
    assert_eq!(
        names,
        map(&[
            ("a/meteo", "a__meteo"),
            ("b/meteo", "b__meteo"),
            ("c/météo", &hashed("meteo", "c", "météo")),
        ])
    );
    // No exported name is the slug the other two share.
    assert!(!names.values().any(|n| n == "meteo"), "{names:#?}");
    let ids = tool_ids(&env);
    for (tool, name) in &names {
        assert_valid_name(name);
        let reference = format!("{tool}@v1");
        let ran = resolves_back(&env, name, &reference, &ids[&reference]);
        assert!(!ran, "{reference} ran with an argument its schema refuses");
        // `--tool` takes exported names too.
        let list = export(&env, &["--provider", "openai", "--tool", name]);
        assert_eq!(descriptions("openai", &list), [tool.as_str()]);
    }
}

/// Strict mode makes every property required and an optional one nullable, so a model in strict
/// mode sends `null` for an argument it does not want to give. The strict view's contract
/// (`provider::strict`): "null means not given". The call must then be accepted by `invoke`
/// against the canonical schema, which does not take `null` there: the exported tool must be
/// callable with what strict mode makes the model send.
#[test]
fn a_strict_mode_call_with_null_for_optional_arguments_is_accepted_by_invoke() {
    let env = TestEnv::new();
    env.bundle("b");
    let schema = json!({
        "type": "object",
        "properties": {
            "q": { "type": "string" },
            "opt": { "type": "string" },
            "window": {
                "type": "object",
                "properties": { "from": { "type": "string" }, "to": { "type": "string" } },
                "required": ["from"],
                "additionalProperties": false
            }
        },
        "required": ["q"],
        "additionalProperties": false
    });
    // A native tool reading the clock: harmless to run.
    env.put_tool("b", &with_schema("clock", "Clock.", &schema));
    let list = export(&env, &["--provider", "openai", "--bundle", "b", "--strict"]);
    let parameters = &list[0]["function"]["parameters"];
    assert_eq!(parameters["required"], json!(["q", "opt", "window"]));
    assert_eq!(
        parameters["properties"]["opt"]["type"],
        json!(["string", "null"])
    );
    // What the model sends in strict mode when it gives neither `opt` nor `window.to`, as
    // OpenAI delivers it (arguments as a JSON string).
    let arguments = json!({ "q": "now", "opt": null, "window": { "from": "today", "to": null } });
    let args = serde_json::to_string(&arguments.to_string()).unwrap();
    let run = env.run(&["--json", "invoke", "clock", "--args", &args]);
    assert_eq!(run.status, Some(0), "a strict-mode call was refused\n{run}");
    assert_eq!(run.json()["ok"], true);
    let run = env.run(&[
        "--json",
        "invoke",
        "clock",
        "--args",
        r#"{"q": "now", "opt": null, "window": null}"#,
    ]);
    assert_eq!(run.status, Some(0), "a strict-mode call was refused\n{run}");
}

// ---------------------------------------------------------------------------------------------
// OpenAI: Chat Completions and Responses, the tool limit.

#[test]
fn openai_chat_wraps_each_tool_in_a_function_object() {
    let env = TestEnv::new();
    env.bundle("b");
    let schema = weather_schema();
    env.put_tool("b", &with_schema("weather", "Weather for a city.", &schema));
    let list = export(&env, &["--provider", "openai", "--bundle", "b"]);
    let expected = json!([{
        "type": "function",
        "function": { "name": "weather", "description": "Weather for a city.", "parameters": schema }
    }]);
    assert_eq!(ordered(&list), ordered(&expected));
}

#[test]
fn openai_responses_is_flat_and_says_strict() {
    let env = TestEnv::new();
    env.bundle("b");
    let schema = weather_schema();
    env.put_tool("b", &with_schema("weather", "Weather for a city.", &schema));
    let list = export(&env, &["--provider", "openai-responses", "--bundle", "b"]);
    // Responses turns strict mode on unless told otherwise: `strict: false` is written out.
    let expected = json!([{
        "type": "function",
        "name": "weather",
        "description": "Weather for a city.",
        "parameters": schema,
        "strict": false
    }]);
    assert_eq!(ordered(&list), ordered(&expected));

    let strict = export(
        &env,
        &[
            "--provider",
            "openai-responses",
            "--bundle",
            "b",
            "--strict",
        ],
    );
    let entry = &strict[0];
    assert_eq!(
        keys(entry),
        ["type", "name", "description", "parameters", "strict"]
    );
    assert_eq!(entry["strict"], true);
    assert_eq!(entry["parameters"], weather_schema_strict());
    // Chat Completions with --strict: the same view, inside `function`.
    let chat = export(&env, &["--provider", "openai", "--bundle", "b", "--strict"]);
    assert_eq!(
        keys(&chat[0]["function"]),
        ["name", "description", "parameters", "strict"]
    );
    assert_eq!(chat[0]["function"]["strict"], true);
    assert_eq!(chat[0]["function"]["parameters"], weather_schema_strict());
}

#[test]
fn a_tool_that_asks_for_strict_mode_gets_it_from_openai_only() {
    let env = TestEnv::new();
    env.bundle("b");
    let mut doc = with_schema("weather", "Weather for a city.", &weather_schema());
    doc["strict"] = json!(true);
    env.put_tool("b", &doc);
    let chat = export(&env, &["--provider", "openai", "--bundle", "b"]);
    assert_eq!(chat[0]["function"]["strict"], true);
    assert_eq!(chat[0]["function"]["parameters"], weather_schema_strict());
    let responses = export(&env, &["--provider", "openai-responses", "--bundle", "b"]);
    assert_eq!(responses[0]["strict"], true);
    assert_eq!(responses[0]["parameters"], weather_schema_strict());
    // Providers without strict mode send the canonical schema.
    let ollama = export(&env, &["--provider", "ollama", "--bundle", "b"]);
    assert_eq!(
        keys(&ollama[0]["function"]),
        ["name", "description", "parameters"]
    );
    assert_eq!(
        ordered(&ollama[0]["function"]["parameters"]),
        ordered(&weather_schema())
    );
    let anthropic = export(&env, &["--provider", "anthropic", "--bundle", "b"]);
    assert_eq!(
        ordered(&anthropic[0]["input_schema"]),
        ordered(&weather_schema())
    );
}

#[test]
fn openai_takes_at_most_128_tools_unless_forced() {
    let env = TestEnv::new();
    let bundle_id = env.bundle("many");
    // With the 3 built-ins enabled by default: 125 + 3 = 128, the most one request takes.
    for n in 0..125 {
        write_tool_file(
            &env,
            &bundle_id,
            n,
            &format!("tool-{n:03}"),
            Some(json!({"type": "object"})),
        );
    }
    for provider in ["openai", "openai-responses"] {
        assert_eq!(
            export(&env, &["--provider", provider])
                .as_array()
                .unwrap()
                .len(),
            128
        );
    }
    write_tool_file(
        &env,
        &bundle_id,
        125,
        "tool-125",
        Some(json!({"type": "object"})),
    );
    for provider in ["openai", "openai-responses"] {
        let error = env.json_error(&["export", "--provider", provider], 3);
        assert_eq!(error.error.code, "VALIDATION_ERROR");
        assert_eq!(
            error.error.message,
            format!("129 tools is more than {provider} takes in one request (128)")
        );
        assert_eq!(
            error.error.details,
            json!({"provider": provider, "count": 129, "max": 128})
        );
        let hint = error.error.hint.unwrap();
        assert!(hint.contains("toolctl pick"), "{hint}");
        assert!(hint.contains("--force"), "{hint}");
        let forced = export(&env, &["--provider", provider, "--force"]);
        assert_eq!(forced.as_array().unwrap().len(), 129);
        // Narrowing the export is the other way out.
        assert_eq!(
            export(&env, &["--provider", provider, "--bundle", "many"])
                .as_array()
                .unwrap()
                .len(),
            126
        );
    }
    // The other providers have no such limit.
    for provider in ["anthropic", "ollama", "mcp"] {
        assert_eq!(
            export(&env, &["--provider", provider])
                .as_array()
                .unwrap()
                .len(),
            129
        );
    }
    let gemini = export(&env, &["--provider", "gemini"]);
    assert_eq!(
        gemini[0]["functionDeclarations"].as_array().unwrap().len(),
        129
    );
}

#[test]
fn strict_is_refused_for_providers_without_strict_mode() {
    let env = TestEnv::new();
    for provider in ["anthropic", "ollama", "gemini", "mcp"] {
        let error = env.json_error(&["export", "--provider", provider, "--strict"], 3);
        assert_eq!(error.error.code, "VALIDATION_ERROR");
        assert_eq!(
            error.error.message,
            format!("--strict is OpenAI's strict mode; {provider} has none")
        );
        assert_eq!(
            error.error.hint.as_deref(),
            Some("use --strict with --provider openai or openai-responses")
        );
    }
}

#[test]
fn an_unknown_provider_is_a_usage_error() {
    let env = TestEnv::new();
    let run = env.run(&["export", "--provider", "openia"]);
    run.failure(2);
    run.stderr_has("unknown provider 'openia'; one of: openai, openai-responses, anthropic, ollama, gemini, mcp");
    assert_eq!(run.stdout, "");
}

#[test]
fn the_output_is_the_same_with_or_without_json() {
    let env = TestEnv::fixture();
    for provider in PROVIDERS {
        let plain = env.run(&["export", "--provider", provider, "--lenient", "--quiet"]);
        plain.success();
        let json = env.run(&[
            "--json",
            "export",
            "--provider",
            provider,
            "--lenient",
            "--quiet",
        ]);
        json.success();
        assert_eq!(plain.stdout, json.stdout, "{provider}");
        assert!(
            plain.stdout.trim_start().starts_with('['),
            "{provider}: {}",
            plain.stdout
        );
    }
}

/// OpenAI (Chat and Responses, strict or not) answers a root `oneOf`/`anyOf`/`allOf` with 400
/// "schema must have type 'object' and not have 'oneOf'/'anyOf'/'allOf'/'enum'/'not' at the top
/// level", and a root that is not an object with "schema must be a JSON Schema of 'type:
/// \"object\"'"; Anthropic answers the alternatives with "input_schema does not support oneOf,
/// allOf, or anyOf at the top level". Either fails the whole request, every tool with it, so
/// export must refuse such a tool (naming keyword and pointer) rather than send it. MCP
/// clients pass `inputSchema` on to such APIs, so MCP refuses them too. Not in PROVIDERS.md
/// yet; known from many public bug reports (e.g. langchain-ai/langchainjs#9804,
/// anthropics/claude-code#5319). The fixture's `weather/air-quality` is such a tool.
#[test]
fn openai_anthropic_and_mcp_refuse_alternatives_at_the_root() {
    let env = TestEnv::new();
    env.bundle("b");
    let properties = json!({ "city": { "type": "string" }, "lat": { "type": "number" }, "lon": { "type": "number" } });
    for (slug, keyword) in [("either", "oneOf"), ("any", "anyOf"), ("all", "allOf")] {
        let schema = json!({
            "type": "object",
            "properties": properties,
            keyword: [{ "required": ["city"] }, { "required": ["lat", "lon"] }]
        });
        env.put_tool("b", &with_schema(slug, slug, &schema));
    }
    // `not` and `enum` at the root are refused the same way.
    env.put_tool(
        "b",
        &with_schema(
            "never",
            "never",
            &json!({ "type": "object", "properties": properties, "not": { "required": ["city"] } }),
        ),
    );
    env.put_tool(
        "b",
        &with_schema(
            "listed",
            "listed",
            &json!({ "type": "object", "enum": [{ "city": "Oslo" }, { "city": "Bergen" }] }),
        ),
    );
    env.put_tool("b", &with_schema("fine", "Fine.", &weather_schema()));
    let expected = BTreeMap::from([
        ("b/all@v1".to_owned(), "allOf"),
        ("b/any@v1".to_owned(), "anyOf"),
        ("b/either@v1".to_owned(), "oneOf"),
        ("b/listed@v1".to_owned(), "enum"),
        ("b/never@v1".to_owned(), "not"),
    ]);
    for provider in ["openai", "openai-responses", "anthropic", "mcp"] {
        let run = env.run(&["--json", "export", "--provider", provider, "--bundle", "b"]);
        assert_eq!(
            run.status,
            Some(3),
            "{provider} sent schemas it answers with 400\n{run}"
        );
        let error: ErrorDoc = run.parse();
        let refused = refused_problems(&error);
        assert_eq!(
            refused.keys().cloned().collect::<Vec<_>>(),
            expected.keys().cloned().collect::<Vec<_>>(),
            "{provider}"
        );
        for (reference, keyword) in &expected {
            assert!(
                refused[reference]
                    .iter()
                    .any(|(k, p, _)| k == keyword && p == "/argSchema"),
                "{provider} {reference}: {:#?}",
                refused[reference]
            );
        }
        // --lenient leaves them out, each with a warning, and sends the fine one.
        let run = env.run(&[
            "export",
            "--provider",
            provider,
            "--bundle",
            "b",
            "--lenient",
        ]);
        run.success();
        assert_eq!(names_of(provider, &run.json()), ["fine"], "{provider}");
        assert_eq!(
            left_out_refs(&run.stderr),
            [
                "b/either@v1",
                "b/any@v1",
                "b/all@v1",
                "b/never@v1",
                "b/listed@v1"
            ],
            "{provider}"
        );
    }
    // A root that is not an object (or says no type), the same for each of them.
    env.bundle("t");
    env.put_tool(
        "t",
        &with_schema("text", "Text.", &json!({ "type": "string" })),
    );
    env.put_tool(
        "t",
        &with_schema(
            "untyped",
            "Untyped.",
            &json!({ "properties": { "city": { "type": "string" } } }),
        ),
    );
    for provider in ["openai", "openai-responses", "anthropic", "mcp"] {
        let run = env.run(&["--json", "export", "--provider", provider, "--bundle", "t"]);
        assert_eq!(
            run.status,
            Some(3),
            "{provider} sent a non-object root\n{run}"
        );
        let error: ErrorDoc = run.parse();
        let refused = refused_problems(&error);
        for reference in ["t/text@v1", "t/untyped@v1"] {
            let problems: Vec<(&str, &str)> = refused[reference]
                .iter()
                .map(|(k, p, _)| (k.as_str(), p.as_str()))
                .collect();
            assert_eq!(problems, [("type", "/argSchema")], "{provider} {reference}");
        }
    }
    // Ollama takes any JSON Schema and sends them as they are.
    let list = export(&env, &["--provider", "ollama", "--bundle", "b"]);
    assert_eq!(
        names_of("ollama", &list),
        ["either", "any", "all", "never", "listed", "fine"]
    );
    let list = export(&env, &["--provider", "ollama", "--bundle", "t"]);
    assert_eq!(names_of("ollama", &list), ["text", "untyped"]);
}

// ---------------------------------------------------------------------------------------------
// OpenAI strict mode: a transformed copy of the schema.

#[test]
fn strict_closes_every_object_requires_every_property_and_makes_optional_ones_nullable() {
    let env = TestEnv::new();
    env.bundle("b");
    let schema = json!({
        "type": "object",
        "properties": {
            "city": { "type": "string", "description": "City." },
            "days": { "type": "integer", "minimum": 1 },
            "units": { "type": "string", "enum": ["metric", "imperial"] },
            "window": {
                "type": "object",
                "properties": {
                    "from": { "type": "string", "format": "date" },
                    "to": { "type": "string", "format": "date" }
                },
                "required": ["from"]
            },
            "stops": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": { "name": { "type": "string" } },
                    "required": ["name"]
                }
            }
        },
        "required": ["city"]
    });
    env.put_tool("b", &with_schema("trip", "Plan a trip.", &schema));
    let list = export(&env, &["--provider", "openai", "--bundle", "b", "--strict"]);
    let expected = json!({
        "type": "object",
        "properties": {
            "city": { "type": "string", "description": "City." },
            "days": { "type": ["integer", "null"], "minimum": 1 },
            "units": { "type": ["string", "null"], "enum": ["metric", "imperial", null] },
            "window": {
                "type": ["object", "null"],
                "properties": {
                    "from": { "type": "string", "format": "date" },
                    "to": { "type": ["string", "null"], "format": "date" }
                },
                "required": ["from", "to"],
                "additionalProperties": false
            },
            "stops": {
                "type": ["array", "null"],
                "items": {
                    "type": "object",
                    "properties": { "name": { "type": "string" } },
                    "required": ["name"],
                    "additionalProperties": false
                }
            }
        },
        "required": ["city", "days", "units", "window", "stops"],
        "additionalProperties": false
    });
    assert_eq!(list[0]["function"]["parameters"], expected);
    assert_eq!(list[0]["function"]["strict"], true);
    assert_eq!(
        strict_violations(&list[0]["function"]["parameters"]),
        Vec::<String>::new()
    );
}

#[test]
fn strict_turns_exclusive_one_of_into_any_of_and_puts_ref_alone() {
    let env = TestEnv::new();
    env.bundle("b");
    let schema = json!({
        "type": "object",
        "$defs": {
            "place": {
                "type": "object",
                "properties": { "name": { "type": "string" } },
                "required": ["name"]
            }
        },
        "properties": {
            "target": { "oneOf": [{ "type": "string" }, { "type": "integer" }] },
            "home": { "$ref": "#/$defs/place", "description": "Where you live." }
        },
        "required": ["target", "home"]
    });
    env.put_tool("b", &with_schema("shapes", "Shapes.", &schema));
    let list = export(&env, &["--provider", "openai", "--bundle", "b", "--strict"]);
    let expected = json!({
        "type": "object",
        "$defs": {
            "place": {
                "type": "object",
                "properties": { "name": { "type": "string" } },
                "required": ["name"],
                "additionalProperties": false
            }
        },
        "properties": {
            "target": { "anyOf": [{ "type": "string" }, { "type": "integer" }] },
            "home": { "$ref": "#/$defs/place" }
        },
        "required": ["target", "home"],
        "additionalProperties": false
    });
    assert_eq!(list[0]["function"]["parameters"], expected);
}

#[test]
fn strict_drops_default_title_schema_and_discriminator() {
    let env = TestEnv::new();
    env.bundle("b");
    let kind = |k: &str| {
        json!({
            "type": "object",
            "title": format!("A {k}"),
            "properties": { "kind": { "const": k } },
            "required": ["kind"]
        })
    };
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Arguments",
        "type": "object",
        "properties": {
            "n": { "type": "integer", "default": 3, "title": "N", "description": "How many." },
            "pet": { "anyOf": [kind("cat"), kind("dog")], "discriminator": { "propertyName": "kind" } }
        },
        "required": ["n", "pet"]
    });
    env.put_tool("b", &with_schema("annotated", "Annotated.", &schema));
    let list = export(
        &env,
        &[
            "--provider",
            "openai-responses",
            "--bundle",
            "b",
            "--strict",
        ],
    );
    let closed = |k: &str| {
        json!({
            "type": "object",
            "properties": { "kind": { "const": k } },
            "required": ["kind"],
            "additionalProperties": false
        })
    };
    let expected = json!({
        "type": "object",
        "properties": {
            "n": { "type": "integer", "description": "How many." },
            "pet": { "anyOf": [closed("cat"), closed("dog")] }
        },
        "required": ["n", "pet"],
        "additionalProperties": false
    });
    assert_eq!(list[0]["parameters"], expected);
}

#[test]
fn strict_refuses_what_it_cannot_say_naming_tool_keyword_and_pointer() {
    let env = TestEnv::new();
    env.bundle("b");
    let object = |extra: Value| {
        let mut p = json!({ "type": "object", "properties": { "a": { "type": "string" } }, "required": ["a"] });
        p.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        p
    };
    let array = |extra: Value| {
        let mut p = json!({ "type": "array", "items": { "type": "string" } });
        p.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        p
    };
    // (the keyword refused, the schema of property `p` holding it): tool `b/case-<i>`.
    let cases: Vec<(&str, Value)> = vec![
        (
            "patternProperties",
            object(json!({"patternProperties": {"^x": {"type": "string"}}})),
        ),
        (
            "unevaluatedProperties",
            object(json!({"unevaluatedProperties": false})),
        ),
        (
            "propertyNames",
            object(json!({"propertyNames": {"maxLength": 3}})),
        ),
        ("minProperties", object(json!({"minProperties": 1}))),
        ("maxProperties", object(json!({"maxProperties": 2}))),
        (
            "unevaluatedItems",
            array(json!({"unevaluatedItems": false})),
        ),
        ("contains", array(json!({"contains": {"const": "x"}}))),
        (
            "minContains",
            array(json!({"contains": {"const": "x"}, "minContains": 2})),
        ),
        (
            "maxContains",
            array(json!({"contains": {"const": "x"}, "maxContains": 2})),
        ),
        ("uniqueItems", array(json!({"uniqueItems": true}))),
        (
            "pattern",
            json!({"type": "string", "pattern": "^(?!admin).*$"}),
        ),
        ("pattern", json!({"type": "string", "pattern": "(?<=x)y"})),
        ("items", json!({"type": "array"})),
        ("$ref", json!({"$ref": "#/$defs/word", "minLength": 2})),
        ("format", json!({"type": "string", "format": "uri"})),
        (
            "oneOf",
            json!({"oneOf": [{"type": "string"}, {"type": "string", "minLength": 3}]}),
        ),
    ];
    let with_p = |p: &Value| {
        json!({
            "type": "object",
            "$defs": { "word": { "type": "string" } },
            "properties": { "p": p },
            "required": ["p"]
        })
    };
    for (i, (_, p)) in cases.iter().enumerate() {
        let slug = format!("case-{i}");
        env.put_tool("b", &with_schema(&slug, &slug, &with_p(p)));
    }
    // Nesting deeper than 5 levels, and an anyOf at the root.
    env.put_tool("b", &with_schema("too-deep", "deep", &with_p(&nested(6))));
    let root_any_of = json!({
        "type": "object",
        "properties": { "a": { "type": "string" }, "b": { "type": "string" } },
        "anyOf": [{ "required": ["a"] }, { "required": ["b"] }]
    });
    env.put_tool("b", &with_schema("root-any-of", "root", &root_any_of));
    env.put_tool("b", &with_schema("fine", "fine", &weather_schema()));
    let mut expected: Vec<(String, &str, &str)> = cases
        .iter()
        .enumerate()
        .map(|(i, (keyword, _))| {
            (
                format!("b/case-{i}@v1"),
                *keyword,
                "/argSchema/properties/p",
            )
        })
        .collect();
    expected.push((
        "b/too-deep@v1".to_owned(),
        "properties",
        "/argSchema/properties/p/properties/l2/properties/l3/properties/l4/properties/l5",
    ));
    expected.push(("b/root-any-of@v1".to_owned(), "anyOf", "/argSchema"));

    let args = [
        "export",
        "--provider",
        "openai",
        "--bundle",
        "b",
        "--strict",
    ];
    let error = env.json_error(&args, 3);
    assert_eq!(error.error.code, "VALIDATION_ERROR");
    assert_eq!(
        error.error.message,
        format!(
            "openai cannot take {} of the tools as they are",
            expected.len()
        )
    );
    assert_eq!(error.error.details["provider"], "openai");
    let refused = refused_problems(&error);
    let expected_refs: BTreeSet<String> = expected.iter().map(|(r, ..)| r.clone()).collect();
    assert_eq!(
        refused.keys().cloned().collect::<BTreeSet<_>>(),
        expected_refs
    );
    for (reference, keyword, pointer) in &expected {
        let problems = &refused[reference];
        assert!(
            problems
                .iter()
                .any(|(k, p, _)| k == keyword && p == pointer),
            "{reference}: expected {keyword} at {pointer}, got {problems:#?}"
        );
        assert!(problems.iter().all(|(_, _, message)| !message.is_empty()));
    }
    let hint = error.error.hint.unwrap();
    assert!(
        hint.contains("--lenient leaves them out with a warning"),
        "{hint}"
    );
    assert!(
        hint.contains("without --strict, OpenAI takes the schemas as they are"),
        "{hint}"
    );

    // --lenient: every refused tool left out with a warning naming it; the fine one exported.
    let run = env.run(&[
        "export",
        "--provider",
        "openai",
        "--bundle",
        "b",
        "--strict",
        "--lenient",
    ]);
    run.success();
    let list = run.json();
    assert_eq!(names_of("openai", &list), ["fine"]);
    assert_eq!(list[0]["function"]["strict"], true);
    let left: BTreeSet<String> = left_out_refs(&run.stderr).into_iter().collect();
    assert_eq!(left, expected_refs);
    run.stderr_has("warning: left out b/case-9@v1 (openai cannot take it): uniqueItems at /argSchema/properties/p: ");
}

#[test]
fn strict_refusal_reads_well_without_json() {
    let env = TestEnv::new();
    env.bundle("b");
    env.put_tool("b", &with_schema("tags", "Tags.", &json!({
        "type": "object",
        "properties": { "tags": { "type": "array", "items": { "type": "string" }, "uniqueItems": true } },
        "required": ["tags"]
    })));
    let run = env.run(&[
        "export",
        "--provider",
        "openai",
        "--bundle",
        "b",
        "--strict",
    ]);
    run.failure(3);
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr
            .starts_with("error: openai cannot take 1 of the tools as they are\n"),
        "{run}"
    );
    run.stderr_has("caused by: b/tags@v1: uniqueItems at /argSchema/properties/tags: OpenAI strict mode has no `uniqueItems`");
    run.stderr_has("hint: --lenient leaves them out with a warning");
}

#[test]
fn strict_takes_the_listed_formats_and_no_other() {
    let env = TestEnv::new();
    env.bundle("b");
    let mut properties = Map::new();
    for (i, format) in STRICT_FORMATS.iter().enumerate() {
        properties.insert(
            format!("f{i}"),
            json!({ "type": "string", "format": format }),
        );
    }
    let names: Vec<&String> = properties.keys().collect();
    let schema = json!({ "type": "object", "properties": properties, "required": names });
    env.put_tool("b", &with_schema("formats", "Formats.", &schema));
    let list = export(&env, &["--provider", "openai", "--bundle", "b", "--strict"]);
    let mut expected = schema.clone();
    expected["additionalProperties"] = json!(false);
    assert_eq!(list[0]["function"]["parameters"], expected);

    for bad in ["uri", "regex", "iri", "json-pointer"] {
        let env = TestEnv::new();
        env.bundle("b");
        env.put_tool(
            "b",
            &with_schema(
                "link",
                "Link.",
                &json!({
                    "type": "object",
                    "properties": { "link": { "type": "string", "format": bad } },
                    "required": ["link"]
                }),
            ),
        );
        let error = env.json_error(
            &[
                "export",
                "--provider",
                "openai",
                "--bundle",
                "b",
                "--strict",
            ],
            3,
        );
        let refused = refused_problems(&error);
        let problems: Vec<(&str, &str)> = refused["b/link@v1"]
            .iter()
            .map(|(k, p, _)| (k.as_str(), p.as_str()))
            .collect();
        assert_eq!(
            problems,
            [("format", "/argSchema/properties/link")],
            "{bad}"
        );
    }
}

#[test]
fn strict_takes_5_levels_of_objects_and_refuses_6() {
    let env = TestEnv::new();
    env.bundle("b");
    // The root is level 1; `nested(n)` adds n − 1 levels below property `p` (level 2).
    let schema = |levels: usize| json!({ "type": "object", "properties": { "p": nested(levels - 1) }, "required": ["p"] });
    env.put_tool("b", &with_schema("five", "Five.", &schema(5)));
    env.put_tool("b", &with_schema("six", "Six.", &schema(6)));
    let list = export(
        &env,
        &["--provider", "openai", "--tool", "b/five", "--strict"],
    );
    assert_eq!(
        strict_violations(&list[0]["function"]["parameters"]),
        Vec::<String>::new()
    );
    assert_eq!(json_depth(&list[0]["function"]["parameters"]), 5);

    let error = env.json_error(
        &[
            "export",
            "--provider",
            "openai",
            "--tool",
            "b/six",
            "--strict",
        ],
        3,
    );
    let refused = refused_problems(&error);
    assert_eq!(
        refused["b/six@v1"]
            .iter()
            .map(|(k, p, _)| (k.as_str(), p.as_str()))
            .collect::<Vec<_>>(),
        [(
            "properties",
            "/argSchema/properties/p/properties/l2/properties/l3/properties/l4/properties/l5"
        )]
    );
    // Without strict mode the deep schema goes out as it is.
    let plain = export(&env, &["--provider", "openai", "--tool", "b/six"]);
    assert_eq!(
        ordered(&plain[0]["function"]["parameters"]),
        ordered(&schema(6))
    );
}

// ---------------------------------------------------------------------------------------------
// Anthropic.

#[test]
fn anthropic_takes_the_schema_verbatim_as_input_schema() {
    let env = TestEnv::new();
    env.bundle("b");
    env.put_tool(
        "b",
        &with_schema("weather", "Weather for a city.", &weather_schema()),
    );
    let list = export(&env, &["--provider", "anthropic", "--bundle", "b"]);
    let expected = json!([{
        "name": "weather",
        "description": "Weather for a city.",
        "input_schema": weather_schema()
    }]);
    assert_eq!(ordered(&list), ordered(&expected));
}

#[test]
fn anthropic_refuses_a_root_that_is_not_an_object() {
    let env = TestEnv::new();
    env.bundle("b");
    env.put_tool(
        "b",
        &with_schema("text", "Text.", &json!({ "type": "string" })),
    );
    env.put_tool("b", &with_schema("fine", "Fine.", &weather_schema()));
    let error = env.json_error(&["export", "--provider", "anthropic", "--bundle", "b"], 3);
    assert_eq!(
        error.error.message,
        "anthropic cannot take 1 of the tools as they are"
    );
    let refused = refused_problems(&error);
    assert_eq!(refused.keys().collect::<Vec<_>>(), ["b/text@v1"]);
    // The root holds the wrong `type`: the keyword, and the pointer of the schema holding it.
    assert_eq!(refused["b/text@v1"].len(), 1, "{refused:#?}");
    let (keyword, pointer, message) = &refused["b/text@v1"][0];
    assert_eq!((keyword.as_str(), pointer.as_str()), ("type", "/argSchema"));
    assert!(message.contains("\"object\""), "{message}");
    // --lenient leaves it out.
    let run = env.run(&[
        "export",
        "--provider",
        "anthropic",
        "--bundle",
        "b",
        "--lenient",
    ]);
    run.success();
    assert_eq!(names_of("anthropic", &run.json()), ["fine"]);
    assert_eq!(left_out_refs(&run.stderr), ["b/text@v1"]);
}

#[test]
fn anthropic_refuses_a_schema_that_is_not_valid_draft_2020_12() {
    let env = TestEnv::new();
    let id = env.bundle("b");
    let typo = with_schema(
        "typo",
        "Typo.",
        &json!({
            "type": "object",
            "properties": { "x": { "type": "strin" } }
        }),
    );
    // `tool put` refuses it (the rules of validate); a hand edit can still bring it in.
    env.try_put_tool("b", &typo).failure(3);
    env.put_tool(
        "b",
        &with_schema("typo", "Typo.", &json!({ "type": "object" })),
    );
    let file = env.tool_file(&id, "typo", "v1");
    let mut stored = read_json(&file);
    stored["argSchema"] = typo["argSchema"].clone();
    std::fs::write(&file, serde_json::to_vec_pretty(&stored).unwrap()).unwrap();
    // Listed unavailable, so left out of a plain export…
    let run = env.run(&[
        "--json",
        "export",
        "--provider",
        "anthropic",
        "--bundle",
        "b",
    ]);
    run.success();
    assert_eq!(run.json(), json!([]), "{run}");
    // …and `--include-disabled` still says why Anthropic would refuse it.
    let error = env.json_error(
        &[
            "export",
            "--provider",
            "anthropic",
            "--bundle",
            "b",
            "--include-disabled",
        ],
        3,
    );
    let refused = refused_problems(&error);
    let problems = &refused["b/typo@v1"];
    // The keyword holding the bad value, and the pointer of the schema holding that keyword
    // (as the strict and Gemini checks say it).
    assert!(
        problems
            .iter()
            .any(|(keyword, pointer, message)| keyword == "type"
                && pointer == "/argSchema/properties/x"
                && message.contains("2020-12")),
        "{problems:#?}"
    );
}

// ---------------------------------------------------------------------------------------------
// Gemini: an OpenAPI 3.0 subset in `functionDeclarations`.

#[test]
fn gemini_puts_declarations_in_one_tools_object() {
    let env = TestEnv::new();
    env.bundle("b");
    let plain = json!({
        "type": "object",
        "properties": { "city": { "type": "string", "description": "City." } },
        "required": ["city"]
    });
    env.put_tool("b", &with_schema("weather", "Weather.", &plain));
    env.put_tool(
        "b",
        &with_schema(
            "clock",
            "Clock.",
            &json!({ "type": "object", "properties": {} }),
        ),
    );
    let list = export(&env, &["--provider", "gemini", "--bundle", "b"]);
    // A tool that takes nothing is declared without parameters (Gemini refuses an empty OBJECT).
    let expected = json!([{ "functionDeclarations": [
        { "name": "weather", "description": "Weather.", "parameters": plain },
        { "name": "clock", "description": "Clock." }
    ]}]);
    assert_eq!(ordered(&list), ordered(&expected));
}

#[test]
fn gemini_inlines_refs() {
    let env = TestEnv::new();
    env.bundle("b");
    let schema = json!({
        "type": "object",
        "$defs": {
            "place": {
                "type": "object",
                "properties": { "name": { "type": "string" } },
                "required": ["name"]
            }
        },
        "properties": {
            "from": { "$ref": "#/$defs/place", "description": "Start." },
            "stops": { "type": "array", "items": { "$ref": "#/$defs/place" } }
        },
        "required": ["from"]
    });
    env.put_tool("b", &with_schema("route", "Route.", &schema));
    let parameters = gemini_parameters(&env, "route");
    let place = json!({
        "type": "object",
        "properties": { "name": { "type": "string" } },
        "required": ["name"]
    });
    let mut from = place.clone();
    from["description"] = json!("Start.");
    let expected = json!({
        "type": "object",
        "properties": {
            "from": from,
            "stops": { "type": "array", "items": place }
        },
        "required": ["from"]
    });
    assert_eq!(parameters, expected);
}

#[test]
fn gemini_turns_const_into_a_one_value_enum() {
    let env = TestEnv::new();
    env.bundle("b");
    env.put_tool(
        "b",
        &with_schema(
            "convert",
            "Convert.",
            &json!({
                "type": "object",
                "properties": {
                    "to": { "const": "EUR" },
                    "from": { "type": "string", "const": "USD" }
                },
                "required": ["to", "from"]
            }),
        ),
    );
    let expected = json!({
        "type": "object",
        "properties": {
            "to": { "type": "string", "enum": ["EUR"] },
            "from": { "type": "string", "enum": ["USD"] }
        },
        "required": ["to", "from"]
    });
    assert_eq!(gemini_parameters(&env, "convert"), expected);
}

#[test]
fn gemini_turns_type_arrays_into_nullable() {
    let env = TestEnv::new();
    env.bundle("b");
    env.put_tool(
        "b",
        &with_schema(
            "update",
            "Update.",
            &json!({
                "type": "object",
                "properties": {
                    "id": { "type": "string" },
                    "note": { "type": ["string", "null"], "maxLength": 100 },
                    "count": { "type": ["integer", "null"], "minimum": 0 }
                },
                "required": ["id"]
            }),
        ),
    );
    let expected = json!({
        "type": "object",
        "properties": {
            "id": { "type": "string" },
            "note": { "type": "string", "nullable": true, "maxLength": 100 },
            "count": { "type": "integer", "nullable": true, "minimum": 0 }
        },
        "required": ["id"]
    });
    assert_eq!(gemini_parameters(&env, "update"), expected);
}

#[test]
fn gemini_drops_additional_properties_and_schema() {
    let env = TestEnv::new();
    env.bundle("b");
    env.put_tool(
        "b",
        &with_schema(
            "closed",
            "Closed.",
            &json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "properties": {
                    "inner": {
                        "type": "object",
                        "properties": { "x": { "type": "number" } },
                        "additionalProperties": false
                    }
                },
                "additionalProperties": false
            }),
        ),
    );
    let expected = json!({
        "type": "object",
        "properties": {
            "inner": { "type": "object", "properties": { "x": { "type": "number" } } }
        }
    });
    assert_eq!(gemini_parameters(&env, "closed"), expected);
}

#[test]
fn gemini_refuses_what_it_cannot_say_naming_tool_keyword_and_pointer() {
    let env = TestEnv::new();
    env.bundle("b");
    // (slug, schema, keyword, pointer in tool.json)
    let cases: Vec<(&str, Value, &str, &str)> = vec![
        (
            "undefined-required",
            json!({ "type": "object", "properties": { "a": { "type": "string" } }, "required": ["a", "ghost"] }),
            "required",
            "/argSchema",
        ),
        (
            "property-names",
            json!({ "type": "object", "properties": { "m": { "type": "object", "properties": { "k": { "type": "string" } }, "propertyNames": { "maxLength": 3 } } } }),
            "propertyNames",
            "/argSchema/properties/m",
        ),
        (
            "exclusive-minimum",
            json!({ "type": "object", "properties": { "t": { "type": "number", "exclusiveMinimum": 0 } } }),
            "exclusiveMinimum",
            "/argSchema/properties/t",
        ),
        (
            "integer-enum",
            json!({ "type": "object", "properties": { "n": { "type": "integer", "enum": [1, 2, 3] } } }),
            "enum",
            "/argSchema/properties/n",
        ),
        (
            "recursive-ref",
            json!({
                "type": "object",
                "$defs": { "node": { "type": "object", "properties": { "next": { "$ref": "#/$defs/node" } } } },
                "properties": { "head": { "$ref": "#/$defs/node" } }
            }),
            "$ref",
            "/argSchema/$defs/node/properties/next",
        ),
    ];
    for (slug, schema, _, _) in &cases {
        env.put_tool("b", &with_schema(slug, slug, schema));
    }
    env.put_tool("b", &with_schema("fine", "Fine.", &weather_schema()));
    let error = env.json_error(&["export", "--provider", "gemini", "--bundle", "b"], 3);
    assert_eq!(
        error.error.message,
        format!(
            "gemini cannot take {} of the tools as they are",
            cases.len()
        )
    );
    let refused = refused_problems(&error);
    for (slug, _, keyword, pointer) in &cases {
        let problems = &refused[&format!("b/{slug}@v1")];
        assert!(
            problems
                .iter()
                .any(|(k, p, _)| k == keyword && p == pointer),
            "{slug}: expected {keyword} at {pointer}, got {problems:#?}"
        );
    }
    assert!(!refused.contains_key("b/fine@v1"));
    let run = env.run(&[
        "export",
        "--provider",
        "gemini",
        "--bundle",
        "b",
        "--lenient",
    ]);
    run.success();
    assert_eq!(names_of("gemini", &run.json()), ["fine"]);
    assert_eq!(left_out_refs(&run.stderr).len(), cases.len());
}

#[test]
fn gemini_turns_exclusive_integer_bounds_into_inclusive_ones() {
    let env = TestEnv::new();
    env.bundle("b");
    env.put_tool("b", &with_schema("bounds", "Bounds.", &json!({
        "type": "object",
        "properties": { "n": { "type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 10 } }
    })));
    assert_eq!(
        gemini_parameters(&env, "bounds"),
        json!({ "type": "object", "properties": { "n": { "type": "integer", "minimum": 1, "maximum": 9 } } })
    );
}

// ---------------------------------------------------------------------------------------------
// Ollama.

#[test]
fn ollama_uses_the_openai_chat_wrapper_without_strict() {
    let env = TestEnv::new();
    env.bundle("b");
    env.put_tool(
        "b",
        &with_schema("weather", "Weather for a city.", &weather_schema()),
    );
    let list = export(&env, &["--provider", "ollama", "--bundle", "b"]);
    let expected = json!([{
        "type": "function",
        "function": { "name": "weather", "description": "Weather for a city.", "parameters": weather_schema() }
    }]);
    assert_eq!(ordered(&list), ordered(&expected));
}

// ---------------------------------------------------------------------------------------------
// MCP.

#[test]
fn mcp_entries_carry_title_input_schema_and_object_output_schema() {
    let env = TestEnv::new();
    env.bundle("b");
    let output = json!({ "type": "object", "properties": { "temp": { "type": "number" } }, "required": ["temp"] });
    let mut doc = with_schema("weather", "Weather for a city.", &weather_schema());
    doc["displayName"] = json!("City weather");
    doc["outputSchema"] = output.clone();
    env.put_tool("b", &doc);
    // structuredContent is always an object: an array outputSchema is not sent.
    let mut listed = with_schema("list", "A list.", &weather_schema());
    listed["outputSchema"] = json!({ "type": "array", "items": { "type": "string" } });
    env.put_tool("b", &listed);
    let list = export(&env, &["--provider", "mcp", "--bundle", "b"]);
    let expected = json!([
        {
            "name": "weather",
            "title": "City weather",
            "description": "Weather for a city.",
            "inputSchema": weather_schema(),
            "outputSchema": output
        },
        { "name": "list", "description": "A list.", "inputSchema": weather_schema() }
    ]);
    assert_eq!(ordered(&list), ordered(&expected));
}

#[test]
fn mcp_tools_without_parameters() {
    let env = TestEnv::new();
    env.bundle("b");
    // MCP's own form for "takes nothing" goes out as it is; so does an open `properties: {}`,
    // which takes any object (closing it would change its meaning).
    let nothing = json!({ "type": "object", "additionalProperties": false });
    env.put_tool("b", &with_schema("nothing", "Takes nothing.", &nothing));
    env.put_tool(
        "b",
        &with_schema(
            "open",
            "Takes anything.",
            &json!({ "type": "object", "properties": {} }),
        ),
    );
    // No argSchema at all, deliberately (allowNoSchema): any object, unchecked.
    let mut unchecked = tool_doc_with(
        "unchecked",
        "v1",
        json!({ "description": "Unchecked.", "allowNoSchema": true, "noSchemaMode": "full" }),
    );
    unchecked.as_object_mut().unwrap().shift_remove("argSchema");
    env.put_tool("b", &unchecked);
    let list = export(&env, &["--provider", "mcp", "--bundle", "b"]);
    let schemas: BTreeMap<String, String> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["name"].as_str().unwrap().to_owned(),
                ordered(&e["inputSchema"]),
            )
        })
        .collect();
    assert_eq!(
        schemas["nothing"],
        r#"{"type":"object","additionalProperties":false}"#
    );
    assert_eq!(schemas["open"], r#"{"type":"object","properties":{}}"#);
    assert_eq!(schemas["unchecked"], r#"{"type":"object"}"#);
    // The other providers send the same any-object schema for the unchecked tool.
    let openai = export(&env, &["--provider", "openai", "--tool", "b/unchecked"]);
    assert_eq!(
        openai[0]["function"]["parameters"],
        json!({ "type": "object" })
    );
}

#[test]
fn mcp_annotations_come_from_the_tool_or_its_http_method() {
    let env = http_env();
    let own = json!({ "readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false });
    let mut annotated = http_tool("annotated", "POST");
    annotated["annotations"] = own.clone();
    env.put_tool("h", &annotated);
    env.put_tool(
        "h",
        &tool_doc_with("native", "v1", json!({ "description": "native" })),
    );
    // An explicit `safe` wins over the method.
    let mut safe_post = http_tool("safe-post", "POST");
    safe_post["safe"] = json!(true);
    env.put_tool("h", &safe_post);
    let mut unsafe_put = http_tool("unsafe-put", "PUT");
    unsafe_put["safe"] = json!(false);
    env.put_tool("h", &unsafe_put);
    for (slug, safe) in [("safe-native", true), ("unsafe-native", false)] {
        env.put_tool(
            "h",
            &tool_doc_with(slug, "v1", json!({ "description": slug, "safe": safe })),
        );
    }
    let list = export(&env, &["--provider", "mcp", "--bundle", "h"]);
    let annotations: BTreeMap<String, Option<Value>> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["name"].as_str().unwrap().to_owned(),
                e.get("annotations").cloned(),
            )
        })
        .collect();
    let read = json!({ "readOnlyHint": true, "destructiveHint": false, "idempotentHint": true });
    let destructive =
        json!({ "readOnlyHint": false, "destructiveHint": true, "idempotentHint": true });
    for name in ["get", "head"] {
        assert_eq!(annotations[name], Some(read.clone()), "{name}");
    }
    // OPTIONS is idempotent, but `pick` holds it unsafe (only GET and HEAD are safe without
    // `safe`), so MCP is not told it is read-only or harmless either.
    assert_eq!(
        annotations["options"],
        Some(json!({ "readOnlyHint": false, "idempotentHint": true })),
        "options"
    );
    for name in ["put", "delete"] {
        assert_eq!(annotations[name], Some(destructive.clone()), "{name}");
    }
    // POST and PATCH: neither read-only nor idempotent; `destructiveHint` left to MCP's
    // default (true), since toolctl does not know them harmless.
    let write = json!({ "readOnlyHint": false, "idempotentHint": false });
    for name in ["post", "patch"] {
        assert_eq!(annotations[name], Some(write.clone()), "{name}");
    }
    // The tool's own annotations win; a native tool without any sends none (MCP's cautious
    // defaults apply).
    assert_eq!(annotations["annotated"], Some(own));
    assert_eq!(annotations["native"], None);
    // `safe: true` says not destructive; `safe: false` never read-only, and keeps what the
    // method says otherwise.
    assert_eq!(
        annotations["safe-post"],
        Some(json!({ "readOnlyHint": false, "idempotentHint": false, "destructiveHint": false }))
    );
    assert_eq!(annotations["unsafe-put"], Some(destructive.clone()));
    assert_eq!(
        annotations["safe-native"],
        Some(json!({ "destructiveHint": false }))
    );
    assert_eq!(
        annotations["unsafe-native"],
        Some(json!({ "readOnlyHint": false }))
    );
}

/// An unannotated POST is unsafe to toolctl (`pick` hides it), and so is a tool that says
/// `"safe": false`: the MCP annotations export writes must not tell a client otherwise
/// (`destructiveHint: false` or `readOnlyHint: true` is exactly what makes a tool "safe" by
/// toolctl's own rule).
#[test]
fn mcp_annotations_never_make_an_unsafe_tool_look_safe() {
    let env = http_env();
    let mut unsafe_get = http_tool("unsafe-get", "GET");
    unsafe_get["safe"] = json!(false);
    env.put_tool("h", &unsafe_get);
    env.put_tool(
        "h",
        &tool_doc_with(
            "unsafe-native",
            "v1",
            json!({ "description": "native", "safe": false }),
        ),
    );
    let list = export(&env, &["--provider", "mcp", "--bundle", "h"]);
    let mut harmless = Vec::new();
    for name in ["post", "patch", "unsafe-get", "unsafe-native"] {
        let entry = entry_named("mcp", &list, name);
        if let Some(annotations) = entry.get("annotations")
            && (annotations.get("readOnlyHint") == Some(&json!(true))
                || annotations.get("destructiveHint") == Some(&json!(false)))
        {
            harmless.push(format!("{name}: {annotations}"));
        }
    }
    assert_eq!(
        harmless,
        Vec::<String>::new(),
        "unsafe to toolctl, but their MCP annotations say they are harmless"
    );
    // `safe: false` on a GET: not read-only, `destructiveHint: false` removed (MCP's default,
    // destructive, applies); what the method says of idempotence stays.
    assert_eq!(
        entry_named("mcp", &list, "unsafe-get")["annotations"],
        json!({ "readOnlyHint": false, "idempotentHint": true })
    );
}

// ---------------------------------------------------------------------------------------------
// Schema fidelity: the canonical schema is sent as it is, and never changed.

#[test]
fn verbatim_providers_keep_the_schema_byte_for_byte() {
    let env = TestEnv::new();
    let bundle_id = env.bundle("b");
    // Keys in no alphabetical order anywhere, `$defs`, an enum in its own order, nested arrays.
    let schema = json!({
        "type": "object",
        "required": ["zeta", "alpha"],
        "properties": {
            "zeta": { "type": "string", "enum": ["c", "a", "b"], "description": "Z first." },
            "alpha": { "$ref": "#/$defs/matrix" },
            "mid": { "maxLength": 9, "type": "string", "minLength": 1 }
        },
        "$defs": {
            "matrix": {
                "type": "array",
                "items": { "type": "array", "items": { "type": "object", "properties": { "y": { "type": "number" }, "x": { "type": "number" } } } }
            }
        },
        "additionalProperties": false,
        "description": "Order matters to nobody but us."
    });
    env.put_tool("b", &with_schema("ordered", "Ordered.", &schema));
    let stored = std::fs::read_to_string(env.tool_file(&bundle_id, "ordered", "v1")).unwrap();
    let stored: Value = serde_json::from_str(&stored).unwrap();
    assert_eq!(
        ordered(&stored["argSchema"]),
        ordered(&schema),
        "tool put kept the order"
    );
    let canonical = ordered(&schema);
    for provider in VERBATIM {
        let run = env.run(&["export", "--provider", provider, "--bundle", "b"]);
        run.success();
        assert!(
            squeeze(&run.stdout).contains(&canonical),
            "{provider}: the schema is not in the output as written\n{canonical}\n{}",
            run.stdout
        );
    }
}

#[test]
fn export_never_changes_the_catalog_files() {
    let env = TestEnv::fixture();
    let before = catalog_files(env.catalog());
    assert!(before.keys().filter(|p| p.ends_with("tool.json")).count() >= 29);
    for provider in PROVIDERS {
        for extra in [&[][..], &["--include-disabled"][..]] {
            let mut args = vec!["export", "--provider", provider, "--lenient"];
            args.extend_from_slice(extra);
            env.run(&args).success();
        }
    }
    for provider in ["openai", "openai-responses"] {
        env.run(&["export", "--provider", provider, "--strict", "--lenient"])
            .success();
    }
    let after = catalog_files(env.catalog());
    assert_eq!(
        after.keys().collect::<Vec<_>>(),
        before.keys().collect::<Vec<_>>()
    );
    for (path, bytes) in &before {
        assert!(after[path] == *bytes, "{} changed", path.display());
    }
}

// ---------------------------------------------------------------------------------------------
// Filters and which tools go out.

#[test]
fn bundle_filter_takes_slugs_and_ids() {
    let env = TestEnv::fixture();
    // The weather bundle, less `air-quality`, which OpenAI cannot take: --lenient leaves it
    // out, and says so.
    let weather = ["current-conditions", "weather-alerts", "forecast"];
    let (by_slug, left_out) = export_lenient(
        &env,
        &["--provider", "openai", "--bundle", "weather", "--lenient"],
    );
    assert_eq!(names_of("openai", &by_slug), weather);
    assert_eq!(left_out, FIXTURE_NOT_OBJECT_ROOT);
    let (by_id, left_out) = export_lenient(
        &env,
        &[
            "--provider",
            "openai",
            "--bundle",
            "018e2cbd-7e80-7dc2-87bd-2676e9d1e07b",
            "--lenient",
        ],
    );
    assert_eq!(names_of("openai", &by_id), weather);
    assert_eq!(left_out, FIXTURE_NOT_OBJECT_ROOT);
    // Ollama takes all four.
    let all_weather = export(&env, &["--provider", "ollama", "--bundle", "weather"]);
    assert_eq!(
        names_of("ollama", &all_weather),
        [
            "current-conditions",
            "air-quality",
            "weather-alerts",
            "forecast"
        ]
    );
    let two = export(
        &env,
        &[
            "--provider",
            "mcp",
            "--bundle",
            "files",
            "--bundle",
            "builtin",
        ],
    );
    assert_eq!(
        names_of("mcp", &two),
        [
            "readfile",
            "file-search",
            "now",
            "read-notes",
            "find-docs",
            "current-time",
            "read-config"
        ]
    );
    let run = env.run(&[
        "--json",
        "export",
        "--provider",
        "openai",
        "--bundle",
        "nope",
    ]);
    run.failure(4);
    assert_eq!(run.json()["error"]["code"], "NOT_FOUND");
}

#[test]
fn tag_filter_needs_every_tag() {
    let env = TestEnv::fixture();
    assert_eq!(
        names_of(
            "openai",
            &export(&env, &["--provider", "openai", "--tag", "write"])
        ),
        [
            "create-issue",
            "create-event",
            "update-event",
            "delete-event",
            "add-issue-comment"
        ]
    );
    assert_eq!(
        names_of(
            "openai",
            &export(
                &env,
                &[
                    "--provider",
                    "openai",
                    "--tag",
                    "write",
                    "--tag",
                    "calendar"
                ]
            )
        ),
        ["create-event", "update-event", "delete-event"]
    );
    assert_eq!(
        export(&env, &["--provider", "openai", "--tag", "no-such-tag"]),
        json!([])
    );
    // With --bundle: both filters apply.
    assert_eq!(
        names_of(
            "openai",
            &export(
                &env,
                &[
                    "--provider",
                    "openai",
                    "--tag",
                    "write",
                    "--bundle",
                    "github"
                ]
            )
        ),
        ["create-issue", "add-issue-comment"]
    );
}

#[test]
fn tool_filter_takes_refs_ids_and_exported_names() {
    let env = TestEnv::fixture();
    let one = |tool: &str| export(&env, &["--provider", "openai", "--tool", tool]);
    // bundle/slug and the bare slug mean the newest enabled version; @version names one.
    for tool in [
        "weather/forecast",
        "forecast",
        "0195189b-8440-7aa9-af42-ed08a234ca69",
    ] {
        let list = one(tool);
        assert_eq!(names_of("openai", &list), ["forecast"], "{tool}");
        assert!(
            list[0]["function"]["parameters"]["properties"]
                .get("hours")
                .is_some(),
            "{tool}: not v2.1"
        );
    }
    let v2 = one("weather/forecast@v2");
    assert_eq!(names_of("openai", &v2), ["forecast"]);
    assert!(
        v2[0]["function"]["parameters"]["properties"]
            .get("days")
            .is_some(),
        "not v2"
    );
    // Several tools, in the order asked; a tool named twice goes out once.
    let list = export(
        &env,
        &[
            "--provider",
            "anthropic",
            "--tool",
            "now",
            "--tool",
            "github/get-repo",
            "--name",
            "now",
        ],
    );
    assert_eq!(names_of("anthropic", &list), ["now", "get-repo"]);
    // Still within the other filters.
    let list = export(
        &env,
        &[
            "--provider",
            "anthropic",
            "--tool",
            "now",
            "--tool",
            "github/get-repo",
            "--bundle",
            "github",
        ],
    );
    assert_eq!(names_of("anthropic", &list), ["get-repo"]);
    // A disabled or unusable tool named explicitly is an error, unless --include-disabled.
    for (tool, status) in [
        (
            "search/image-search",
            "search/image-search@v1 cannot be exported: disabled",
        ),
        (
            "finance/stock-quote",
            "finance/stock-quote@v1 cannot be exported: bundle disabled",
        ),
    ] {
        let error = env.json_error(&["export", "--provider", "openai", "--tool", tool], 6);
        assert_eq!(error.error.code, "TOOL_DISABLED");
        assert_eq!(error.error.message, status);
        assert_eq!(
            error.error.hint.as_deref(),
            Some("--include-disabled exports disabled and unavailable tools too")
        );
    }
    let list = export(
        &env,
        &[
            "--provider",
            "openai",
            "--tool",
            "search/image-search",
            "--tool",
            "finance/stock-quote",
            "--include-disabled",
        ],
    );
    assert_eq!(names_of("openai", &list), ["image-search", "stock-quote"]);
    let error = env.json_error(&["export", "--provider", "openai", "--tool", "nope"], 4);
    assert_eq!(error.error.code, "NOT_FOUND");
}

#[test]
fn include_disabled_adds_disabled_and_unavailable_tools() {
    let env = TestEnv::fixture();
    let (list, left_out) = export_lenient(
        &env,
        &["--provider", "openai", "--include-disabled", "--lenient"],
    );
    // Only `air-quality` is left out: none of the tools added is one OpenAI cannot take.
    assert_eq!(left_out, FIXTURE_NOT_OBJECT_ROOT);
    let names = names_of("openai", &list);
    let default: BTreeSet<&str> = FIXTURE_EXPORT
        .iter()
        .filter(|(_, r)| !FIXTURE_NOT_OBJECT_ROOT.contains(r))
        .map(|(n, _)| *n)
        .collect();
    let added: BTreeSet<&str> = names
        .iter()
        .copied()
        .filter(|n| !default.contains(n))
        .collect();
    assert_eq!(
        added,
        BTreeSet::from([
            "currency-convert",
            "exchange-rates",
            "stock-quote",
            "image-search",
            "weather-report",
            "exec"
        ])
    );
    assert_eq!(names.len(), default.len() + added.len());
    // Still one version of forecast, the newest enabled one.
    assert_eq!(names.iter().filter(|n| **n == "forecast").count(), 1);
    let finance = export(&env, &["--provider", "openai", "--bundle", "finance"]);
    assert_eq!(finance, json!([]));
    let finance = export(
        &env,
        &[
            "--provider",
            "openai",
            "--bundle",
            "finance",
            "--include-disabled",
        ],
    );
    assert_eq!(
        names_of("openai", &finance),
        ["currency-convert", "stock-quote", "exchange-rates"]
    );
}

#[test]
fn one_version_per_slug_the_newest_enabled() {
    let env = TestEnv::fixture();
    let forecast = |extra: &[&str]| {
        // --lenient: the weather bundle holds `air-quality`, which OpenAI cannot take.
        let mut args = vec!["--provider", "openai", "--bundle", "weather", "--lenient"];
        args.extend_from_slice(extra);
        let (list, left_out) = export_lenient(&env, &args);
        assert_eq!(left_out, FIXTURE_NOT_OBJECT_ROOT);
        let entries: Vec<Value> = list
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["function"]["name"] == "forecast")
            .cloned()
            .collect();
        assert_eq!(entries.len(), 1, "{list:#}");
        entries[0]["function"].clone()
    };
    let newest = forecast(&[]);
    assert!(
        newest["description"]
            .as_str()
            .unwrap()
            .starts_with("Get an hour-by-hour weather forecast")
    );
    let properties = keys(&newest["parameters"]["properties"]);
    assert_eq!(properties, ["city", "hours", "units"]);
    // With v2.1 disabled, v2 stands for the slug (with or without --include-disabled).
    env.run(&["tool", "disable", "weather/forecast@v2.1"])
        .success();
    for extra in [&[][..], &["--include-disabled"][..]] {
        let older = forecast(extra);
        assert_eq!(
            keys(&older["parameters"]["properties"]),
            ["city", "days", "units"]
        );
        assert!(
            older["description"]
                .as_str()
                .unwrap()
                .starts_with("Get the weather forecast for a city for up to 7 days")
        );
    }
}

#[test]
fn a_tool_without_arg_schema_is_refused_where_it_shows() {
    let env = TestEnv::new();
    let bundle_id = env.bundle("b");
    // `tool put` refuses such a tool, so it is written by hand: it loads as unavailable.
    write_tool_file(&env, &bundle_id, 1, "schemaless", None);
    env.put_tool("b", &with_schema("fine", "Fine.", &weather_schema()));
    assert_eq!(
        names_of(
            "openai",
            &export(&env, &["--provider", "openai", "--bundle", "b"])
        ),
        ["fine"]
    );
    for provider in PROVIDERS {
        let error = env.json_error(
            &[
                "export",
                "--provider",
                provider,
                "--bundle",
                "b",
                "--include-disabled",
            ],
            3,
        );
        let refused = refused_problems(&error);
        assert_eq!(
            refused.keys().collect::<Vec<_>>(),
            ["b/schemaless@v1"],
            "{provider}"
        );
        let (keyword, pointer, message) = &refused["b/schemaless@v1"][0];
        assert_eq!(
            (keyword.as_str(), pointer.as_str()),
            ("argSchema", "/argSchema"),
            "{provider}"
        );
        assert!(message.contains("allowNoSchema"), "{message}");
        let run = env.run(&[
            "export",
            "--provider",
            provider,
            "--bundle",
            "b",
            "--include-disabled",
            "--lenient",
        ]);
        run.success();
        assert_eq!(names_of(provider, &run.json()), ["fine"]);
        assert_eq!(left_out_refs(&run.stderr), ["b/schemaless@v1"]);
    }
}

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
/// the prefixed names are cut and then collide), a folded slug and two CJK slugs that collide.
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
        ("cjk", "雨雪"),
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
        env.put_tool(&bundle, &marked(&bundle, &slug));
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

/// The rules every entry of `provider`'s list must follow (`PROVIDERS.md`), whatever the
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

/// What in `schema` breaks OpenAI strict mode (PROVIDERS.md), as "pointer: problem".
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

/// What in `schema` is outside Gemini's OpenAPI subset (PROVIDERS.md), as "pointer: problem".
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
