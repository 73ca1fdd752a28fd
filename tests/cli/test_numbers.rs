//! README, The catalog on disk: every rewrite edits the document as read, and a number keeps
//! the text it was written with — an integer past 64 bits keeps every digit (a `maximum`, an
//! `enum` of 20-digit IDs, a field toolctl does not know), through every command that rewrites
//! a file: `tool put`, `tool enable/disable`, `bundle put/enable/disable`, `bundle import
//! --as-new`, `config set`, `mcp import`. And a `maximum` past 64 bits still bounds the
//! arguments `invoke` accepts.

use crate::common::{TestEnv, write_file};
use serde_json::json;
use std::path::Path;

/// Past `u64::MAX` (the first: 2^64) and far past it, both signs: none is a double either.
const U64_PLUS_ONE: &str = "18446744073709551616";
const ID_A: &str = "98765432109876543211";
const ID_B: &str = "98765432109876543213";
const BIG: &str = "123456789012345678901234567891";
const NEG_BIG: &str = "-123456789012345678901234567891";

/// Numbers that keep their text too, beside the integers (one form of exponent only).
const KEPT: [(&str, &str); 4] = [
    ("x-tenth", "1.10"),
    ("x-zero", "-0"),
    ("x-exp", "1e+2"),
    ("x-scale", "1.10"),
];

/// A tool's text with the numbers of this module in its argSchema and in unknown fields.
fn tool_text(slug: &str) -> String {
    format!(
        r#"{{"slug": "{slug}", "version": "v1", "type": "native", "impl": {{"func": "now"}},
  "argSchema": {{"type": "object", "properties": {{
    "n": {{"type": "integer", "minimum": {NEG_BIG}, "maximum": {BIG}, "default": {U64_PLUS_ONE},
           "examples": [{BIG}, {NEG_BIG}], "x-scale": 1.10}},
    "id": {{"enum": [{ID_A}, {ID_B}]}}}}}},
  "x-big": {BIG}, "x-negative": {NEG_BIG}, "x-tenth": 1.10, "x-zero": -0, "x-exp": 1E2}}"#
    )
}

/// Whether `text` holds `key: value` on a line, or (without a key) `value` as an array's item.
fn holds(text: &str, key: Option<&str>, value: &str) -> bool {
    text.lines()
        .map(|l| l.trim().trim_end_matches(','))
        .any(|l| match key {
            Some(key) => l == format!("\"{key}\": {value}"),
            None => l == value,
        })
}

/// `file` (a tool written from [`tool_text`]) still holds every number as written.
#[track_caller]
fn assert_tool_numbers(file: &Path, stage: &str) {
    let text = std::fs::read_to_string(file).unwrap();
    for (key, value) in [
        ("minimum", NEG_BIG),
        ("maximum", BIG),
        ("default", U64_PLUS_ONE),
        ("x-big", BIG),
        ("x-negative", NEG_BIG),
    ]
    .into_iter()
    .chain(KEPT)
    {
        assert!(
            holds(&text, Some(key), value),
            "{stage}: {key} is not {value}:\n{text}"
        );
    }
    for item in [BIG, NEG_BIG, ID_A, ID_B] {
        assert!(holds(&text, None, item), "{stage}: no item {item}:\n{text}");
    }
}

#[test]
fn integers_past_64_bits_keep_their_digits_through_tool_and_archive_rewrites() {
    let env = TestEnv::new();
    let id = env.bundle("w");
    let input = env.root().join("inputs/big.json");
    write_file(&input, &tool_text("big"));
    env.run(&["tool", "put", "--bundle", "w", input.to_str().unwrap()])
        .success();
    let file = env.tool_file(&id, "big", "v1");
    assert_tool_numbers(&file, "put");
    env.run(&["tool", "disable", "w/big"]).success();
    assert_tool_numbers(&file, "disable");
    env.run(&["tool", "enable", "w/big"]).success();
    assert_tool_numbers(&file, "enable");
    // `tool get` prints the document with the same digits.
    let got = env.run(&["--json", "tool", "get", "w/big"]);
    got.success().stdout_has(BIG).stdout_has(ID_B);

    // An archive's copy (new IDs written into every file) keeps them too.
    let archive = env.root().join("w.zip");
    env.run(&["bundle", "export", "w", "-o", archive.to_str().unwrap()])
        .success();
    let copy = env.json(&[
        "bundle",
        "import",
        archive.to_str().unwrap(),
        "--as-new",
        "--slug",
        "w2",
    ]);
    let copy_id = copy["bundle"]["bundleID"]
        .as_str()
        .unwrap_or_else(|| panic!("{copy}"));
    assert_tool_numbers(&env.tool_file(copy_id, "big", "v1"), "import --as-new");
    // The archive imported with --update finds the same version unchanged, even once the
    // catalog's file says its numbers in other words (numbers compare by value).
    let text = std::fs::read_to_string(&file).unwrap();
    let reworded = text
        .replace("\"x-tenth\": 1.10", "\"x-tenth\": 1.1")
        .replace("\"x-exp\": 1e+2", "\"x-exp\": 100.0");
    assert_ne!(reworded, text);
    write_file(&file, &reworded);
    let update = env.json(&["bundle", "import", "--update", archive.to_str().unwrap()]);
    assert_eq!(update["unchanged"], json!(["big@v1"]), "{update}");
}

#[test]
fn integers_past_64_bits_keep_their_digits_in_bundle_and_config_files() {
    let env = TestEnv::new();
    let input = env.root().join("inputs/bundle.json");
    write_file(
        &input,
        &format!(
            r#"{{"slug": "b", "x-big": {BIG}, "x-ids": [{ID_A}, {NEG_BIG}], "x-tenth": 1.10}}"#
        ),
    );
    let put = env.json(&["bundle", "put", "--file", input.to_str().unwrap()]);
    let bundle_id = put["bundleID"].as_str().unwrap().to_owned();
    let bundle_file = env.bundle_dir(&bundle_id).join("bundle.json");
    let check = |stage: &str| {
        let text = std::fs::read_to_string(&bundle_file).unwrap();
        assert!(holds(&text, Some("x-big"), BIG), "{stage}:\n{text}");
        assert!(holds(&text, Some("x-tenth"), "1.10"), "{stage}:\n{text}");
        assert!(holds(&text, None, ID_A), "{stage}:\n{text}");
        assert!(holds(&text, None, NEG_BIG), "{stage}:\n{text}");
    };
    check("put");
    env.run(&["bundle", "disable", "b"]).success();
    check("disable");
    env.run(&["bundle", "enable", "b"]).success();
    check("enable");
    env.run(&[
        "bundle",
        "put",
        "--id",
        &bundle_id,
        "--slug",
        "b",
        "--description",
        "Big",
    ])
    .success();
    check("put --description");

    // toolctl.json: a field toolctl does not know survives `config set`.
    let config = env.catalog().join("toolctl.json");
    let text = std::fs::read_to_string(&config).unwrap();
    let text = text.replacen('{', &format!("{{\n  \"x-big\": {NEG_BIG},"), 1);
    write_file(&config, &text);
    env.run(&["config", "set", "allowedHosts", "[\"api.example.com\"]"])
        .success();
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(holds(&text, Some("x-big"), NEG_BIG), "{text}");
    assert!(text.contains("api.example.com"), "{text}");
    // A value is written as given, and one of the same value in other words changes nothing.
    env.run(&["config", "set", "attach.defaultDropRate", "0.60"])
        .success();
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(holds(&text, Some("defaultDropRate"), "0.60"), "{text}");
    env.run(&["config", "set", "attach.defaultDropRate", "0.6"])
        .success()
        .stderr_has("unchanged");
    assert_eq!(std::fs::read_to_string(&config).unwrap(), text);
}

#[test]
fn integers_past_64_bits_keep_their_digits_through_mcp_serve_and_import() {
    let source = TestEnv::new();
    let id = source.bundle("src");
    let input = source.root().join("inputs/big.json");
    write_file(&input, &tool_text("big"));
    source
        .run(&["tool", "put", "--bundle", "src", input.to_str().unwrap()])
        .success();
    assert_tool_numbers(&source.tool_file(&id, "big", "v1"), "source");

    let env = TestEnv::new();
    crate::test_mcp_tools::declare(
        &env,
        json!({ "src": crate::test_mcp_tools::toolctl_server(&source, &["--mode", "all", "--bundle", "src"]) }),
    );
    let import = env.json(&["mcp", "import", "src", "--bundle", "served"]);
    let added = import["added"]
        .as_array()
        .unwrap_or_else(|| panic!("{import}"));
    assert_eq!(added.len(), 1, "{import}");
    let bundle_id = env
        .bundle_list(&[])
        .items
        .iter()
        .find(|b| b.slug == "served")
        .unwrap()
        .bundle_id
        .clone();
    let slug = added[0]["ref"].as_str().unwrap();
    let slug = slug.split(['/', '@']).nth(1).unwrap();
    let file = env.tool_file(&bundle_id, slug, "1");
    let text = std::fs::read_to_string(&file).unwrap();
    for (key, value) in [
        ("minimum", NEG_BIG),
        ("maximum", BIG),
        ("default", U64_PLUS_ONE),
    ] {
        assert!(
            holds(&text, Some(key), value),
            "{key} is not {value}:\n{text}"
        );
    }
    for item in [BIG, NEG_BIG, ID_A, ID_B] {
        assert!(holds(&text, None, item), "no item {item}:\n{text}");
    }
    assert!(holds(&text, Some("x-scale"), "1.10"), "{text}");
    // Imported again: the same numbers, so the same tool (no new version), even once the
    // catalog's file says one in other words.
    write_file(
        &file,
        &text.replace("\"x-scale\": 1.10", "\"x-scale\": 1.1"),
    );
    let again = env.json(&["mcp", "import", "src", "--bundle", "served"]);
    assert_eq!(
        again["unchanged"].as_array().map(Vec::len),
        Some(1),
        "{again}"
    );
    assert_eq!(again["changed"], json!([]), "{again}");
}

#[test]
fn a_maximum_past_64_bits_still_bounds_the_arguments() {
    let env = TestEnv::new();
    env.bundle("w");
    let input = env.root().join("inputs/big.json");
    write_file(&input, &tool_text("big"));
    env.run(&["tool", "put", "--bundle", "w", input.to_str().unwrap()])
        .success();
    let invoke = |n: &str| {
        env.run(&[
            "--json",
            "invoke",
            "w/big",
            "--args",
            &format!(r#"{{"n": {n}}}"#),
        ])
    };
    // Within the bounds, however long.
    for n in [
        "0",
        U64_PLUS_ONE,
        "123456789012345678901234567890",
        "-123456789012345678901234567890",
    ] {
        invoke(n).success();
    }
    // As the nearest double: one past the maximum is not told apart from it.
    invoke("123456789012345678901234567892").success();
    // Past them, by orders of magnitude either way.
    for (n, keyword) in [
        ("1234567890123456789012345678910", "maximum"),
        ("-1234567890123456789012345678910", "minimum"),
    ] {
        let run = invoke(n);
        run.failure(3).stdout_has("/n");
        assert!(
            run.stdout.contains(keyword) || run.stderr.contains(keyword),
            "{run}"
        );
    }
}

#[test]
fn a_number_a_field_cannot_take_is_named_with_what_was_expected() {
    let env = TestEnv::new();
    env.bundle("w");
    let put = |fields: &str| {
        let input = env.root().join("inputs/wrong.json");
        write_file(
            &input,
            &format!(
                r#"{{"slug": "t", "version": "v1", "argSchema": {{"type": "object"}}, {fields}}}"#
            ),
        );
        env.run(&["tool", "put", "--bundle", "w", input.to_str().unwrap()])
    };
    let http = |timeout: &str| {
        format!(
            r#""type": "http", "impl": {{"urlTemplate": "https://api.example.com/x", "timeoutMs": {timeout}}}"#
        )
    };
    let native = r#""type": "native", "impl": {"func": "now"}"#;
    for (fields, said) in [
        (
            http("1.50"),
            "/impl/timeoutMs: invalid type: floating point `1.5`, expected a whole number, 0 or more",
        ),
        (
            http("-5"),
            "/impl/timeoutMs: invalid value: integer `-5`, expected a whole number, 0 or more",
        ),
        (
            http(BIG),
            "/impl/timeoutMs: invalid type: floating point `1.2345678901234568e+29`, expected a whole number, 0 or more",
        ),
        (
            format!(r#"{native}, "isEnabled": 7"#),
            "/isEnabled: invalid type: integer `7`, expected a boolean",
        ),
        (
            format!(r#"{native}, "isEnabled": 1E5"#),
            "/isEnabled: invalid type: floating point `100000.0`, expected a boolean",
        ),
        (
            format!(r#"{native}, "tags": [{NEG_BIG}]"#),
            "/tags/0: invalid type: floating point `-1.2345678901234568e+29`, expected a string",
        ),
        (
            r#""type": "native", "impl": {"func": 5}"#.to_owned(),
            "/impl: invalid type: integer `5`, expected a string",
        ),
    ] {
        put(&fields).failure(3).stderr_has(said);
    }
}
