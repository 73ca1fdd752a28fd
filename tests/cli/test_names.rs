//! Slug and version rules, through `tool put` (and `bundle put`): Unicode letters, digits and
//! the ASCII dash, at most 64 characters (not bytes); versions may also hold dots but are
//! never `.`/`..`. Every rejection is exit 3 with a message naming the field and the problem,
//! and writes nothing.

use crate::common::{TestEnv, read_json, tool_doc};

#[test]
fn valid_slugs_and_versions_are_stored_under_their_names() {
    let env = TestEnv::new();
    let bundle_id = env.bundle("w");
    let longest = "é".repeat(64);
    let cases = [
        ("weather", "v1"),
        ("météo", "v1"),
        ("天気", "v1"),
        ("a-1", "v1"),
        ("weather", "v2.1"),
        ("weather", "1.0.0-rc1"),
        (longest.as_str(), "v1"),
    ];
    for (slug, version) in cases {
        let put = env.put_tool("w", &tool_doc(slug, version));
        assert_eq!(put["slug"], slug);
        assert_eq!(put["version"], version);
        let file = env.tool_file(&bundle_id, slug, version);
        assert_eq!(read_json(&file)["slug"], slug, "{}", file.display());
        let got = env.json(&["tool", "get", &format!("w/{slug}@{version}")]);
        assert_eq!(got["ref"], format!("w/{slug}@{version}"));
    }
    assert_eq!(env.refs(&["--bundle", "w"]).len(), cases.len());
    // Case-sensitive: Weather and weather are two tools (not in one bundle, where their folders
    // would be one on macOS and Windows: test_catalog_layout).
    env.bundle("w2");
    env.put_tool("w2", &tool_doc("Weather", "v1"));
    let got = env.json(&["tool", "get", "w2/Weather"]);
    assert_eq!(got["ref"], "w2/Weather@v1");
    let got = env.json(&["tool", "get", "w/weather@v1"]);
    assert_eq!(got["ref"], "w/weather@v1");
    // A slug is matched in its own case only.
    env.run(&["tool", "get", "w2/weather"]).failure(4);
    env.run(&["tool", "get", "w/Weather"]).failure(4);
}

#[test]
fn invalid_slugs_and_versions_are_rejected_with_the_reason() {
    let env = TestEnv::new();
    let bundle_id = env.bundle("w");
    let too_long = "é".repeat(65);
    let cases: &[(&str, &str, &str, &str)] = &[
        // (slug, version, pointer, what the message must say)
        ("a_b", "v1", "/slug", "has an underscore"),
        ("a b", "v1", "/slug", "has whitespace"),
        ("a\tb", "v1", "/slug", "has whitespace"),
        ("a/b", "v1", "/slug", "has a slash"),
        ("..", "v1", "/slug", "has a dot"),
        (".", "v1", "/slug", "has a dot"),
        ("a.b", "v1", "/slug", "has a dot"),
        ("", "v1", "/slug", "the slug is empty"),
        (&too_long, "v1", "/slug", "65 characters long; at most 64"),
        ("a$b", "v1", "/slug", "'$'"),
        ("a\u{7}b", "v1", "/slug", "control character"),
        ("ok", "..", "/version", "the version '..' starts with '.'"),
        ("ok", ".", "/version", "starts with '.'"),
        ("ok", ".hidden", "/version", "starts with '.'"),
        ("ok", "v_1", "/version", "has an underscore"),
        ("ok", "v/1", "/version", "has a slash"),
        ("ok", "", "/version", "the version is empty"),
    ];
    for &(slug, version, pointer, problem) in cases {
        let input = env.input(&tool_doc(slug, version));
        let run = env.run(&["tool", "put", "--bundle", "w", &input]);
        run.failure(3);
        assert_eq!(run.stdout, "");
        let field = &pointer[1..];
        assert!(
            run.stderr.contains(&format!("{pointer}: ")) && run.stderr.contains(field),
            "the message names the {field}\n{run}"
        );
        assert!(
            run.stderr.contains(problem),
            "{slug:?}@{version:?}: message must say {problem:?}\n{run}"
        );

        let err = env.json_error(&["tool", "put", "--bundle", "w", &input], 3);
        assert_eq!(err.error.code, "VALIDATION_ERROR");
        assert_eq!(err.error.details["problems"][0]["pointer"], pointer);
        assert!(
            err.error.details["problems"][0]["message"]
                .as_str()
                .unwrap()
                .contains(problem)
        );
    }
    assert!(
        !env.bundle_dir(&bundle_id).join("tools").exists()
            || std::fs::read_dir(env.bundle_dir(&bundle_id).join("tools"))
                .unwrap()
                .next()
                .is_none(),
        "a rejected put writes nothing"
    );
    assert!(
        env.refs(&["--bundle", "w", "--include-disabled"])
            .is_empty()
    );
}

#[test]
fn bundle_slugs_follow_the_same_rules() {
    let env = TestEnv::new();
    for slug in ["météo", "天気", "a-1"] {
        env.run(&["bundle", "put", "--slug", slug]).success();
    }
    for (slug, problem) in [
        ("a.b", "has a dot"),
        ("..", "has a dot"),
        (&*"x".repeat(65), "65 characters long"),
    ] {
        env.run(&["bundle", "put", "--slug", slug])
            .failure(3)
            .stderr_has("/slug: the slug")
            .stderr_has(problem);
    }
    assert_eq!(env.bundle_list(&[]).items.len(), 4);
}
