//! The planner's rules, each on a small agent with known scores, and a property test of its
//! invariants over random agents, matches and limits.

use super::plan::{Held, Input, Kind, Limits, Matched, Phase, Plan, plan as decide};
use super::{AgentId, Settings};
use crate::catalog::config::AttachConfig;
use proptest::prelude::*;
use std::collections::{HashMap, HashSet};

fn limits(max_total: usize, max_external: usize, min_external: usize) -> Limits {
    Limits {
        max_total,
        max_external,
        min_external,
        drop_rate: 0.6,
        exclude_core: true,
    }
}

/// External tool `key` with relevance `relevance`, attached at `at`.
fn ext(key: &str, relevance: f64, at: i64) -> Held<String> {
    Held {
        key: key.to_owned(),
        kind: Kind::External,
        pinned: false,
        relevance,
        attached_at: at,
    }
}

fn core(key: &str) -> Held<String> {
    Held {
        kind: Kind::Core,
        ..ext(key, 0.0, 0)
    }
}

fn pinned(mut held: Held<String>) -> Held<String> {
    held.pinned = true;
    held
}

fn matched(key: &str, score: f64) -> Matched<String> {
    Matched {
        key: key.to_owned(),
        kind: Kind::External,
        score,
    }
}

fn input(held: Vec<Held<String>>, matched: Vec<Matched<String>>, limits: Limits) -> Input<String> {
    Input {
        held,
        matched,
        has_query: true,
        auto_prune: true,
        limits,
    }
}

fn detached(plan: &Plan<String>, phase: Phase) -> Vec<&str> {
    plan.detached
        .iter()
        .filter(|(_, p)| *p == phase)
        .map(|(k, _)| k.as_str())
        .collect()
}

/// `n` external tools `t0..`, relevance rising with the number, attached in that order.
fn many(n: usize) -> Vec<Held<String>> {
    (0..n)
        .map(|i| ext(&format!("t{i:02}"), i as f64 / 100.0, i as i64))
        .collect()
}

#[test]
fn pre_attach_pruning_makes_room_for_the_matches_least_relevant_first() {
    // 20 external tools at MAX_MCP_TOOLS 20; 3 arrive: the 3 least relevant go first.
    let mut plan_input = input(
        many(20),
        vec![matched("a", 0.9), matched("b", 0.8), matched("c", 0.7)],
        limits(30, 20, 7),
    );
    plan_input.auto_prune = false;
    let plan = decide(&plan_input);
    assert_eq!(detached(&plan, Phase::PreAttach), ["t00", "t01", "t02"]);
}

#[test]
fn pre_attach_pruning_counts_the_total_limit_too() {
    // 5 core + 10 external at MAX_TOTAL_TOOLS 16: 2 arriving means 1 must go first.
    let mut held: Vec<Held<String>> = (0..5).map(|i| core(&format!("core{i}"))).collect();
    held.extend(many(10));
    let plan = decide(&input(
        held,
        vec![matched("a", 1.0), matched("b", 0.5)],
        limits(16, 20, 7),
    ));
    assert_eq!(detached(&plan, Phase::PreAttach), ["t00"]);
}

#[test]
fn pre_attach_pruning_never_goes_under_the_minimum() {
    // 8 external at MIN 7 and MAX 8: 5 arriving would need 5 gone, only 1 may go.
    let plan = decide(&input(
        many(8),
        (0..5).map(|i| matched(&format!("n{i}"), 0.5)).collect(),
        limits(30, 8, 7),
    ));
    assert_eq!(detached(&plan, Phase::PreAttach), ["t00"]);
}

#[test]
fn detachment_removes_what_the_query_did_not_match_down_to_the_minimum() {
    // 12 unmatched external tools, MIN 7: the 5 least relevant go, the 7 most relevant stay.
    let mut plan_input = input(many(12), vec![matched("t03", 1.0)], limits(30, 20, 7));
    plan_input.auto_prune = false;
    let plan = decide(&plan_input);
    assert_eq!(
        detached(&plan, Phase::Detachment),
        ["t00", "t01", "t02", "t04", "t05"],
        "t03 was matched: protected; 5 of the 11 others may go, the least relevant"
    );
    assert_eq!(plan.kept, ["t03", "t06", "t07", "t08", "t09", "t10", "t11"]);
}

#[test]
fn detachment_spares_kept_and_named_tools_and_core_tools() {
    let held = vec![
        pinned(ext("kept", 0.0, 0)),
        ext("free1", 0.0, 1),
        ext("free2", 0.0, 2),
        core("core"),
    ];
    let plan = decide(&input(held, vec![matched("new", 1.0)], limits(30, 20, 0)));
    assert_eq!(detached(&plan, Phase::Detachment), ["free1", "free2"]);
    assert_eq!(plan.kept, ["kept", "core", "new"]);
}

#[test]
fn equal_relevance_detaches_the_tool_attached_longest_ago_first() {
    let held = vec![
        ext("newer", 0.2, 50),
        ext("older", 0.2, 10),
        ext("best", 0.9, 0),
    ];
    let mut plan_input = input(held, vec![], limits(30, 20, 1));
    plan_input.auto_prune = false;
    let plan = decide(&plan_input);
    assert_eq!(detached(&plan, Phase::Detachment), ["older", "newer"]);
}

#[test]
fn attachment_adds_the_matches_the_agent_lacks_best_first() {
    let held = vec![ext("has", 0.5, 0)];
    let plan = decide(&input(
        held,
        vec![matched("b", 0.9), matched("has", 0.8), matched("a", 0.7)],
        limits(30, 20, 0),
    ));
    assert_eq!(plan.attached, ["b", "a"]);
    assert_eq!(plan.kept, ["has", "b", "a"]);
}

#[test]
fn post_attach_pruning_never_detaches_protected_tools() {
    // 6 pinned + 4 free, MIN 9: detachment may take 1 free tool (10 → 9). Post-attach
    // targets max(⌊9 × 0.4⌋, 9) = 9: nothing more goes, the pinned ones least of all.
    let mut held: Vec<Held<String>> = (0..6)
        .map(|i| pinned(ext(&format!("p{i}"), 0.0, 0)))
        .collect();
    held.extend(many(4));
    let plan = decide(&input(held, vec![], limits(30, 20, 9)));
    assert_eq!(detached(&plan, Phase::Detachment), ["t00"]);
    assert!(detached(&plan, Phase::PostAttach).is_empty());

    // MIN 0 and a drop rate of 0.9: the target ⌊6 × 0.1⌋ = 0 is below the 6 pinned tools,
    // which all stay.
    let mut held: Vec<Held<String>> = (0..6)
        .map(|i| pinned(ext(&format!("p{i}"), 0.0, 0)))
        .collect();
    held.push(ext("free", 1.0, 0));
    let mut limits = limits(30, 20, 0);
    limits.drop_rate = 0.9;
    let plan = decide(&input(held, vec![], limits));
    assert_eq!(detached(&plan, Phase::Detachment), ["free"]);
    assert_eq!(plan.kept.len(), 6);
    assert!(plan.warnings.is_empty());
}

#[test]
fn post_attach_pruning_trims_what_the_minimum_kept_through_detachment() {
    // 10 free external tools, MIN 7: detachment keeps the 7 most relevant (t03–t09); 5
    // matches arrive (12 external); the drop rate 0.6 targets max(⌊12×0.4⌋=4, 7) = 7: the 5
    // matches stay (protected), 2 places for the most relevant others: t08, t09.
    let plan_input = input(
        many(10),
        (0..5).map(|i| matched(&format!("n{i}"), 0.5)).collect(),
        limits(30, 20, 7),
    );
    let plan = decide(&plan_input);
    assert_eq!(detached(&plan, Phase::Detachment), ["t00", "t01", "t02"]);
    assert_eq!(
        detached(&plan, Phase::PostAttach),
        ["t03", "t04", "t05", "t06", "t07"]
    );
    assert_eq!(plan.kept, ["t08", "t09", "n0", "n1", "n2", "n3", "n4"]);

    // Without auto-prune the 7 stay beside the 5 matches.
    let mut no_prune = plan_input;
    no_prune.auto_prune = false;
    let plan = decide(&no_prune);
    assert!(detached(&plan, Phase::PostAttach).is_empty());
    assert_eq!(plan.kept.len(), 12);
}

#[test]
fn post_attach_pruning_respects_the_limits_in_its_target() {
    // Drop rate 0, MAX_MCP_TOOLS 6, MIN 4: pre-attach pruning takes 6 of 10 free tools to make
    // room for 4 matches (only 6 may go: 10 → MIN 4); detachment may take none; 4 arrive (8
    // external); post-attach targets max(min(8, MAX 6), MIN 4) = 6: the 2 least relevant of
    // the older tools go.
    let mut limits = limits(30, 6, 4);
    limits.drop_rate = 0.0;
    let plan = decide(&input(
        many(10),
        (0..4).map(|i| matched(&format!("n{i}"), 0.5)).collect(),
        limits,
    ));
    assert_eq!(
        detached(&plan, Phase::PreAttach),
        ["t00", "t01", "t02", "t03", "t04", "t05"]
    );
    assert!(detached(&plan, Phase::Detachment).is_empty());
    assert_eq!(detached(&plan, Phase::PostAttach), ["t06", "t07"]);
    assert_eq!(plan.kept, ["t08", "t09", "n0", "n1", "n2", "n3"]);
    assert!(plan.warnings.is_empty());
}

#[test]
fn limits_hold_without_a_query_least_recently_attached_first() {
    let mut plan_input = input(many(10), vec![], limits(30, 6, 2));
    plan_input.has_query = false;
    for h in &mut plan_input.held {
        h.relevance = 0.0;
    }
    let plan = decide(&plan_input);
    assert_eq!(detached(&plan, Phase::Limits), ["t00", "t01", "t02", "t03"]);
    assert!(
        detached(&plan, Phase::Detachment).is_empty(),
        "no query, no detachment phase"
    );
    assert!(plan.attached.is_empty());
}

#[test]
fn core_tools_leave_for_the_total_limit_only_when_managed() {
    let held = vec![core("c1"), core("c2"), core("c3"), ext("e1", 0.0, 0)];
    let mut plan_input = input(held, vec![], limits(2, 20, 1));
    plan_input.has_query = false;
    let excluded = decide(&plan_input);
    assert!(excluded.detached.is_empty());
    assert_eq!(excluded.warnings.len(), 1, "{:?}", excluded.warnings);
    assert!(
        excluded.warnings[0]
            .to_string()
            .contains("MAX_TOTAL_TOOLS=2")
    );

    plan_input.limits.exclude_core = false;
    let managed = decide(&plan_input);
    assert_eq!(detached(&managed, Phase::Limits), ["c1", "c2"]);
    assert!(managed.warnings.is_empty());
}

#[test]
fn matches_past_a_limit_are_refused_best_first() {
    // 25 matches with MAX_MCP_TOOLS 20: the best 20 arrive, the other 5 are refused.
    let plan = decide(&input(
        vec![],
        (0..25).map(|i| matched(&format!("n{i:02}"), 0.5)).collect(),
        limits(30, 20, 7),
    ));
    assert_eq!(plan.attached.len(), 20);
    assert_eq!(plan.attached[19], "n19");
    let refused: Vec<(&str, &str)> = plan
        .refused
        .iter()
        .map(|(k, l)| (k.as_str(), l.as_str()))
        .collect();
    assert_eq!(
        refused,
        (20..25)
            .map(|i| (format!("n{i}"), "MAX_MCP_TOOLS=20"))
            .collect::<Vec<_>>()
            .iter()
            .map(|(k, l)| (k.as_str(), *l))
            .collect::<Vec<_>>()
    );
    assert!(plan.detached.is_empty());
    assert!(plan.warnings.is_empty(), "{:?}", plan.warnings);
    // The total counts too: 3 protected core tools and MAX_TOTAL_TOOLS 5 leave room for 2.
    let plan = decide(&input(
        vec![core("c1"), core("c2"), core("c3")],
        (0..4).map(|i| matched(&format!("n{i}"), 0.5)).collect(),
        limits(5, 20, 0),
    ));
    assert_eq!(plan.attached, ["n0", "n1"]);
    assert_eq!(plan.refused[0].1, "MAX_TOTAL_TOOLS=5");
}

#[test]
fn protected_tools_over_a_limit_stay_with_a_warning() {
    // 25 tools kept by the request with MAX_MCP_TOOLS 20: they all stay, the run warns.
    let mut held = many(25);
    for h in &mut held {
        h.pinned = true;
    }
    let plan = decide(&input(held, vec![], limits(30, 20, 7)));
    assert!(plan.detached.is_empty());
    assert_eq!(plan.warnings.len(), 1);
    assert!(
        plan.warnings[0]
            .to_string()
            .contains("25 external tools, more than MAX_MCP_TOOLS=20: 25 of them are protected"),
        "{}",
        plan.warnings[0]
    );
}

#[test]
fn agent_ids_are_uuids_bare_or_prefixed() {
    let canonical = "agent-123e4567-e89b-12d3-a456-426614174000";
    for text in [
        canonical,
        "123e4567-e89b-12d3-a456-426614174000",
        "AGENT-123E4567-E89B-12D3-A456-426614174000",
    ] {
        assert_eq!(
            AgentId::parse(text).map(|id| id.to_string()),
            Ok(canonical.to_owned())
        );
    }
    for bad in [
        "",
        "agent-",
        "agent-123",
        "123e4567e89b12d3a456426614174000",
        "{123e4567-e89b-12d3-a456-426614174000}",
        "agent-agent-123e4567-e89b-12d3-a456-426614174000",
        "agent-123e4567-e89b-12d3-a456-42661417400é",
    ] {
        assert!(AgentId::parse(bad).is_err(), "{bad} was accepted");
    }
}

#[test]
fn settings_come_from_the_config_then_the_environment() {
    let config = AttachConfig {
        max_total_tools: Some(40),
        min_mcp_tools: Some(3),
        protected_tools: Some(vec!["find_tools".to_owned()]),
        ..AttachConfig::default()
    };
    let env: HashMap<&str, &str> = [("MAX_TOTAL_TOOLS", "12"), ("PROTECTED_TOOLS", "a, b,,")]
        .into_iter()
        .collect();
    let settings = Settings::resolve(&config, &|name| env.get(name).map(|v| (*v).to_owned()))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(settings.limits.max_total, 12);
    assert_eq!(settings.limits.max_external, 20);
    assert_eq!(settings.limits.min_external, 3);
    assert_eq!(settings.protected, ["a", "b"]);
    assert_eq!(settings.max_limit, 25);
    assert!(settings.limits.exclude_core);

    for (name, value, message) in [
        (
            "MAX_MCP_TOOLS",
            "abc",
            "MAX_MCP_TOOLS=\"abc\" (environment) is not a whole number",
        ),
        (
            "DEFAULT_DROP_RATE",
            "1.5",
            "DEFAULT_DROP_RATE=\"1.5\" (environment) is not a number from 0 to 1",
        ),
        ("EXCLUDE_LETTA_CORE_TOOLS", "maybe", "is not true or false"),
        (
            "MIN_MCP_TOOLS",
            "21",
            "MIN_MCP_TOOLS=21 (environment) is above MAX_MCP_TOOLS=20 (default)",
        ),
        (
            "FIND_TOOLS_MAX_LIMIT",
            "0",
            "FIND_TOOLS_MAX_LIMIT=0 (environment) leaves no room",
        ),
    ] {
        let error = Settings::resolve(&AttachConfig::default(), &|n| {
            (n == name).then(|| value.to_owned())
        })
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
        assert!(error.contains(message), "{name}={value}: {error}");
    }
}

/// A random agent, matches and limits for the property test.
fn scenario() -> impl Strategy<Value = Input<String>> {
    let held = prop::collection::vec((any::<bool>(), any::<bool>(), 0u8..=10, 0i64..100), 0..40);
    let matched = prop::collection::vec((0usize..60, any::<bool>(), 1u8..=10), 0..25);
    let limits = (0usize..40, 0usize..30, 0usize..15, 0u8..=10, any::<bool>());
    (held, matched, limits, any::<bool>(), any::<bool>()).prop_map(
        |(
            held,
            matched,
            (max_total, max_external, min_external, rate, exclude_core),
            has_query,
            auto_prune,
        )| {
            let min_external = min_external.min(max_external).min(max_total);
            let held: Vec<Held<String>> = held
                .into_iter()
                .enumerate()
                .map(|(i, (is_core, pinned, relevance, at))| Held {
                    key: format!("t{i:02}"),
                    kind: if is_core { Kind::Core } else { Kind::External },
                    pinned,
                    relevance: f64::from(relevance) / 10.0,
                    attached_at: at,
                })
                .collect();
            let mut seen = HashSet::new();
            let kinds: HashMap<String, Kind> =
                held.iter().map(|h| (h.key.clone(), h.kind)).collect();
            let matched = if has_query {
                matched
                    .into_iter()
                    .filter(|(i, _, _)| seen.insert(*i))
                    .map(|(i, is_core, score)| {
                        let key = format!("t{i:02}");
                        Matched {
                            kind: kinds.get(&key).copied().unwrap_or(if is_core {
                                Kind::Core
                            } else {
                                Kind::External
                            }),
                            key,
                            score: f64::from(score) / 10.0,
                        }
                    })
                    .collect()
            } else {
                Vec::new()
            };
            Input {
                held,
                matched,
                has_query,
                auto_prune,
                limits: Limits {
                    max_total,
                    max_external,
                    min_external,
                    drop_rate: f64::from(rate) / 10.0,
                    exclude_core,
                },
            }
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn the_planner_keeps_its_promises(input in scenario()) {
        let plan = decide(&input);
        let limits = &input.limits;
        let kind: HashMap<&String, Kind> = input
            .held
            .iter()
            .map(|h| (&h.key, h.kind))
            .chain(input.matched.iter().map(|m| (&m.key, m.kind)))
            .collect();
        let matched: HashSet<&String> = input.matched.iter().map(|m| &m.key).collect();
        let protected = |key: &String| {
            matched.contains(key)
                || input.held.iter().any(|h| &h.key == key
                    && (h.pinned || (h.kind == Kind::Core && limits.exclude_core)))
        };
        let kept: HashSet<&String> = plan.kept.iter().collect();
        prop_assert_eq!(kept.len(), plan.kept.len(), "a tool is held twice");

        // Every held tool is kept or detached, never both; every match ends on the agent.
        for h in &input.held {
            let gone = plan.detached.iter().any(|(k, _)| *k == h.key);
            prop_assert!(gone != kept.contains(&h.key), "{} kept and detached", h.key);
        }
        // Every match ends on the agent, or is refused while the protected tools fill a limit.
        let refused: HashSet<&String> = plan.refused.iter().map(|(k, _)| k).collect();
        for m in &input.matched {
            prop_assert!(kept.contains(&m.key) != refused.contains(&m.key), "match {} missing", m.key);
        }
        if !refused.is_empty() {
            let protected_kept = plan.kept.iter().filter(|k| protected(k)).count();
            let protected_external = plan
                .kept
                .iter()
                .filter(|k| protected(k) && kind[k] == Kind::External)
                .count();
            prop_assert!(
                protected_kept >= limits.max_total || protected_external >= limits.max_external,
                "a match refused with room left"
            );
        }
        // Protected tools never leave; core tools leave only when managed, for the total.
        for (key, phase) in &plan.detached {
            prop_assert!(!protected(key), "protected {} detached in {:?}", key, phase);
            if kind[key] == Kind::Core {
                prop_assert!(!limits.exclude_core && *phase == Phase::Limits);
            }
            if !input.has_query {
                prop_assert_eq!(*phase, Phase::Limits, "without a query only the limits act");
            }
        }
        // Detaching never takes the external tools under the minimum.
        let external = plan.kept.iter().filter(|k| kind[k] == Kind::External).count();
        let held_external = input.held.iter().filter(|h| h.kind == Kind::External).count();
        if plan.detached.iter().any(|(k, _)| kind[k] == Kind::External) {
            prop_assert!(external >= limits.min_external.min(held_external));
            prop_assert!(external >= limits.min_external, "{} external left, MIN {}", external, limits.min_external);
        }
        // Within the limits, unless what stays can not go: protected, or held by the minimum.
        let free_external = plan
            .kept
            .iter()
            .filter(|k| kind[k] == Kind::External && !protected(k))
            .count();
        let free_core = plan
            .kept
            .iter()
            .filter(|k| kind[k] == Kind::Core && !protected(k))
            .count();
        let stuck_external = free_external == 0 || external <= limits.min_external;
        if plan.kept.len() > limits.max_total {
            prop_assert!(stuck_external && (limits.exclude_core || free_core == 0));
        }
        if external > limits.max_external {
            prop_assert!(stuck_external);
        }
        let over = plan.kept.len() > limits.max_total || external > limits.max_external;
        prop_assert_eq!(over, !plan.warnings.is_empty(), "warnings: {:?}", plan.warnings);
    }
}

/// An agent file's `matchScore` in any form of a number (`87.50`, `8.75e1`), or `null`, or
/// left out, and its own fields kept as written: the file has flattened fields, and serde
/// buffers those, where a number that keeps its text reads as a `Value` but not as an `f64`.
#[test]
fn match_scores_read_in_any_form_of_a_number() {
    let id = uuid::Uuid::now_v7();
    let agent = format!("agent-{}", uuid::Uuid::now_v7());
    let file = |score: &str| {
        format!(
            r#"{{"schemaVersion": "1", "agentID": "{agent}", "createdAt": "2025-01-01T00:00:00Z",
                "modifiedAt": "2025-01-01T00:00:00Z", "x-note": 1.10,
                "tools": [{{"toolID": "{id}", "ref": "b/t@v1", "name": "t", "kind": "external",
                            "attachedAt": "2025-01-01T00:00:00Z"{score}}}]}}"#
        )
    };
    let path = std::path::Path::new("agent.json");
    for (score, want) in [
        (r#", "matchScore": 87.50"#, Some(87.5)),
        (r#", "matchScore": 8.75e1"#, Some(87.5)),
        (r#", "matchScore": 87.5"#, Some(87.5)),
        (r#", "matchScore": 87"#, Some(87.0)),
        (r#", "matchScore": null"#, None),
        ("", None),
    ] {
        let parsed = super::AgentFile::parse(&file(score), path, None)
            .unwrap_or_else(|e| panic!("{score}: {e}"));
        assert_eq!(parsed.tools[0].match_score, want, "{score}");
        assert_eq!(parsed.other["x-note"].to_string(), "1.10");
    }
    let err = super::AgentFile::parse(&file(r#", "matchScore": "high""#), path, None).unwrap_err();
    assert!(
        format!("{err:?}").contains("/tools/0/matchScore"),
        "{err:?}"
    );
}
