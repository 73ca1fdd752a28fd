//! Exported names, and that they resolve back in `invoke` and `tool get`.

use super::*;

#[test]
fn names_are_transliterated_to_ascii_and_other_characters_replaced() {
    let env = TestEnv::new();
    env.bundle("b");
    // 22 Hangul syllables transliterate to 66 characters, cut to 64.
    let hangul = "한".repeat(22);
    for slug in [
        "météo",
        "Ångström-2",
        "天気予報",
        "日本語",
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
            ("b/天気予報", "TianQiYuBao"),
            ("b/日本語", "RiBenYu"),
            ("b/Ωmega", "Omega"),
            ("b/plain-Name-9", "plain-Name-9"),
            (&format!("b/{hangul}"), &"Han".repeat(22)[..64]),
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
    // Two CJK slugs that both become "TianQi" (simplified and traditional spellings); a slug and
    // its diacritic twin; a 64-character bundle
    // slug whose prefixed names are both cut to the bundle slug alone.
    let b64 = "b".repeat(64);
    for bundle in ["cjk", "web", b64.as_str()] {
        env.bundle(bundle);
    }
    // `tool put` refuses names that collide: they come as `git pull` brings them.
    env.put_tool_pulled("cjk", &marked("cjk", "天气"));
    env.put_tool_pulled("cjk", &marked("cjk", "天氣"));
    env.put_tool_pulled("cjk", &marked("cjk", "météo"));
    env.put_tool_pulled("cjk", &marked("cjk", "meteo"));
    for slug in ["search", "fetch"] {
        env.put_tool("web", &marked("web", slug));
        env.put_tool_pulled(&b64, &marked(&b64, slug));
    }
    let names = names_by_tool(
        &env,
        "openai",
        &["--bundle", "cjk", "--bundle", "web", "--bundle", &b64],
    );
    // The suffix is `_` and the first 6 hex digits of SHA-256("bundle/slug"): pinned, because a
    // name saved in a conversation must keep meaning the same tool in the next release.
    let expected = map(&[
        ("cjk/天气", &hashed("TianQi", "cjk", "天气")),
        ("cjk/天氣", &hashed("TianQi", "cjk", "天氣")),
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

/// An export of one bundle reads only that bundle's tools, and names them as the whole
/// catalog's export does: the collisions with other bundles still count.
#[test]
fn a_bundles_export_names_its_tools_as_the_whole_export_does() {
    let env = names_env();
    let whole = names_by_tool(&env, "openai", &[]);
    let mut bundles: Vec<String> = names_env_tools().into_iter().map(|(b, _)| b).collect();
    bundles.dedup();
    let mut seen = BTreeMap::new();
    for bundle in &bundles {
        let one = names_by_tool(&env, "openai", &["--bundle", bundle]);
        assert!(!one.is_empty(), "{bundle}");
        for (tool, name) in one {
            assert!(
                tool.starts_with(&format!("{bundle}/")),
                "{tool} in {bundle}"
            );
            seen.insert(tool, name);
        }
    }
    assert_eq!(seen, whole);
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
        reversed.put_tool_pulled(bundle, &marked(bundle, slug));
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
        env.put_tool_pulled(bundle, &marked(bundle, slug));
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
