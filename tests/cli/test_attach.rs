//! `toolctl attach` and `toolctl agent list|show|detach` (the attach contract,
//! `seeds/attach-contract.md`): the real binary on temporary catalogs.
//!
//! - **The contract's response**: the seed's example request over the fixture catalog, the
//!   `--json` document pinned by [`AttachResponse`] (`deny_unknown_fields`, keys in order), and
//!   its counts checked against the agent file after every run by [`attach_ok`].
//! - **Agents as files**: created on first use; bare, prefixed and upper-case IDs name one file.
//! - **Validation**: every bad request or setting is `{"success": false, "error", "code"}`
//!   (exit 3; clap's usage errors exit 2), and the agent file is left byte for byte.
//! - **The phases**: detachment of unmatched external tools down to `MIN_MCP_TOOLS`; protection
//!   (`--keep`, `protectedTools`, `NEVER_DETACH_TOOLS`/`PROTECTED_TOOLS`, matched now, core);
//!   limits without a query (oldest first); post-attach pruning against `--no-auto-prune`;
//!   processing (disabled, deleted, new versions).
//! - **`agent list|show|detach`**, their errors, and hand detachment of protected tools.
//! - **Concurrency**: racing attaches on one agent all land; a held agent lock times out while
//!   other agents go on; no temporary file is left behind.
//! - **A property test** over random small catalogs, limits and sequences of runs, checking the
//!   planner's rules (mirrored from `src/attach/plan.rs`) on the real binary.

use crate::common::{Run, TestEnv, find_prefixed, keys, read_json, timestamp, tool_doc_with};
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

// --- the pinned shapes -----------------------------------------------------------------------

/// `attach --json` on success: the contract's document plus toolctl's additions in `details`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct AttachResponse {
    success: bool,
    message: String,
    details: Details,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Details {
    detached_tools: Vec<String>,
    failed_detachments: Vec<Value>,
    processed_count: usize,
    passed_filter_count: usize,
    success_count: usize,
    failure_count: usize,
    successful_attachments: Vec<Attachment>,
    failed_attachments: Vec<Value>,
    preserved_tools: Vec<String>,
    target_agent: String,
    scorer: Option<String>,
    warnings: Vec<String>,
    detachments: Vec<Detachment>,
}

/// The keys of `details`, in the order toolctl prints them.
const DETAILS_KEYS: [&str; 13] = [
    "detached_tools",
    "failed_detachments",
    "processed_count",
    "passed_filter_count",
    "success_count",
    "failure_count",
    "successful_attachments",
    "failed_attachments",
    "preserved_tools",
    "target_agent",
    "scorer",
    "warnings",
    "detachments",
];

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Attachment {
    success: bool,
    tool_id: String,
    name: String,
    match_score: f64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Detachment {
    tool_id: String,
    name: String,
    #[serde(rename = "ref")]
    reference: String,
    phase: String,
    reason: String,
}

/// `attach --json` on failure: the contract's error document, with toolctl's `code`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct AttachError {
    success: bool,
    error: String,
    code: String,
}

/// `agents/agent-<uuid>.json`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct AgentDoc {
    schema_version: String,
    #[serde(rename = "agentID")]
    agent_id: String,
    created_at: String,
    modified_at: String,
    tools: Vec<AgentTool>,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct AgentTool {
    #[serde(rename = "toolID")]
    tool_id: String,
    #[serde(rename = "ref")]
    reference: String,
    name: String,
    kind: String,
    attached_at: String,
    match_score: Option<f64>,
}

/// `agent show --json`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ShowDoc {
    #[serde(rename = "agentID")]
    agent_id: String,
    created_at: String,
    modified_at: String,
    tools: Vec<ShowTool>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ShowTool {
    #[serde(rename = "toolID")]
    tool_id: String,
    #[serde(rename = "ref")]
    reference: String,
    name: String,
    kind: String,
    attached_at: String,
    match_score: Option<f64>,
    status: String,
}

/// One agent of `agent list --json`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ListItem {
    #[serde(rename = "agentID")]
    agent_id: String,
    tools: usize,
    external: usize,
    core: usize,
    modified_at: String,
}

/// `agent detach --json`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct DetachDoc {
    #[serde(rename = "agentID")]
    agent_id: String,
    detached: Vec<DetachedItem>,
    tools: usize,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct DetachedItem {
    #[serde(rename = "toolID")]
    tool_id: String,
    #[serde(rename = "ref")]
    reference: String,
    name: String,
}

// --- helpers ---------------------------------------------------------------------------------

/// The n-th agent of a test, canonical (`agent-<uuid>`).
fn agent(n: u32) -> String {
    format!("agent-3f2b8c1e-9d4a-4e6b-8a7c-{n:012x}")
}

/// `agent-<uuid>` → `<uuid>`.
fn bare(agent: &str) -> &str {
    agent.strip_prefix("agent-").unwrap()
}

fn agent_path(env: &TestEnv, agent: &str) -> PathBuf {
    env.catalog().join("agents").join(format!("{agent}.json"))
}

/// The agent file, parsed into its pinned shape; `None` when there is none.
#[track_caller]
fn read_agent(env: &TestEnv, agent: &str) -> Option<AgentDoc> {
    let path = agent_path(env, agent);
    path.exists().then(|| {
        serde_json::from_value(read_json(&path))
            .unwrap_or_else(|e| panic!("{} has not the pinned shape: {e}", path.display()))
    })
}

fn ids(doc: &AgentDoc) -> BTreeSet<String> {
    doc.tools.iter().map(|t| t.tool_id.clone()).collect()
}

fn refs_of(doc: &AgentDoc) -> BTreeSet<String> {
    doc.tools.iter().map(|t| t.reference.clone()).collect()
}

/// `bundle/slug` of `bundle/slug@version`.
fn slug_key(reference: &str) -> &str {
    reference.split_once('@').map_or(reference, |(s, _)| s)
}

/// `toolctl --json attach AGENT ARGS…` with environment variables, whatever the outcome.
fn attach_run(env: &TestEnv, agent: &str, args: &[&str], vars: &[(&str, &str)]) -> Run {
    let mut all = vec!["--json", "attach", agent];
    all.extend_from_slice(args);
    let mut cmd = env.command(&all);
    for (name, value) in vars {
        cmd.env(name, value);
    }
    Run::of(cmd, None)
}

/// What one successful attach run gave.
#[derive(Debug)]
struct Outcome {
    resp: AttachResponse,
    run: Run,
    before: Option<AgentDoc>,
    after: AgentDoc,
}

impl Outcome {
    fn attached(&self) -> BTreeSet<String> {
        self.resp
            .details
            .successful_attachments
            .iter()
            .map(|a| a.tool_id.clone())
            .collect()
    }

    /// The phase each detached tool left in, by ref.
    fn phases(&self) -> BTreeMap<String, String> {
        self.resp
            .details
            .detachments
            .iter()
            .map(|d| (d.reference.clone(), d.phase.clone()))
            .collect()
    }
}

/// The request options of attach `args`, as the checks need them.
#[derive(Debug, Clone)]
struct Asked {
    query: String,
    limit: usize,
    min_score: f64,
    auto_prune: bool,
    scorer: String,
}

fn asked(args: &[&str]) -> Asked {
    let mut asked = Asked {
        query: String::new(),
        limit: 10,
        min_score: 35.0,
        auto_prune: true,
        scorer: "bm25".to_owned(),
    };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match *arg {
            "--query" => asked.query = (*it.next().unwrap()).to_owned(),
            "--limit" => asked.limit = it.next().unwrap().parse().unwrap(),
            "--min-score" => asked.min_score = it.next().unwrap().parse().unwrap(),
            "--scorer" => asked.scorer = (*it.next().unwrap()).to_owned(),
            "--no-auto-prune" => asked.auto_prune = false,
            _ => {}
        }
    }
    asked
}

/// Run an attach that must succeed, and check the response against itself, the request and
/// the agent file before and after. `agent` may be spelled any way; the file is found by
/// `canonical`.
#[track_caller]
fn attach_as(
    env: &TestEnv,
    spelled: &str,
    canonical: &str,
    args: &[&str],
    vars: &[(&str, &str)],
) -> Outcome {
    let before = read_agent(env, canonical);
    let before_bytes = std::fs::read(agent_path(env, canonical)).ok();
    let run = attach_run(env, spelled, args, vars);
    run.success();
    let raw = run.json();
    assert_eq!(keys(&raw), ["success", "message", "details"], "{run}");
    assert_eq!(keys(&raw["details"]), DETAILS_KEYS, "details keys\n{run}");
    let resp: AttachResponse = run.parse();
    let after = read_agent(env, canonical).unwrap_or_else(|| panic!("no agent file\n{run}"));
    let asked = asked(args);
    let d = &resp.details;

    // The response on its own.
    assert!(resp.success, "{run}");
    assert_eq!(
        resp.message,
        format!(
            "Successfully processed {} candidates ({} passed min_score={:?}%), attached {} tool(s) to agent {canonical}",
            d.processed_count, d.passed_filter_count, asked.min_score, d.success_count
        ),
        "{run}"
    );
    assert_eq!(d.target_agent, canonical);
    assert!(d.failed_detachments.is_empty() && d.failed_attachments.is_empty());
    assert_eq!(d.failure_count, 0);
    assert_eq!(d.success_count, d.successful_attachments.len(), "{run}");
    assert_eq!(d.success_count, d.passed_filter_count, "{run}");
    assert!(d.passed_filter_count <= d.processed_count, "{run}");
    assert!(d.processed_count <= asked.limit, "{run}");
    let has_query = !asked.query.trim().is_empty();
    if has_query {
        assert_eq!(d.scorer.as_deref(), Some(asked.scorer.as_str()), "{run}");
    } else {
        assert_eq!(d.scorer, None, "{run}");
        assert_eq!(d.processed_count, 0, "{run}");
    }
    let scores: Vec<f64> = d
        .successful_attachments
        .iter()
        .map(|a| a.match_score)
        .collect();
    for a in &d.successful_attachments {
        assert!(a.success);
        assert!(
            a.match_score >= asked.min_score && a.match_score <= 100.0,
            "{a:?} below --min-score {}\n{run}",
            asked.min_score
        );
    }
    assert!(
        scores.windows(2).all(|w| w[0] >= w[1]),
        "best first: {scores:?}"
    );
    let detached_ids: Vec<&str> = d.detachments.iter().map(|x| x.tool_id.as_str()).collect();
    assert_eq!(
        d.detached_tools
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
        detached_ids,
        "detached_tools lists the detachments' tools\n{run}"
    );
    assert_eq!(
        detached_ids.iter().collect::<BTreeSet<_>>().len(),
        detached_ids.len(),
        "a tool leaves once\n{run}"
    );
    for x in &d.detachments {
        let prefix = match x.phase.as_str() {
            "processing" => "processing: ",
            "pre-attach" => "pre-attach pruning: ",
            "detachment" => "detachment: ",
            "post-attach" => "post-attach pruning: ",
            "limits" => "over a limit: ",
            other => panic!("unknown phase {other:?}\n{run}"),
        };
        assert!(x.reason.starts_with(prefix), "{x:?}");
        assert!(
            !x.name.is_empty() && x.reference.contains('@'),
            "a detachment names its tool: {x:?}"
        );
        if !has_query {
            assert!(
                matches!(x.phase.as_str(), "processing" | "limits"),
                "without a query only the limits detach: {x:?}"
            );
        }
        if !asked.auto_prune {
            assert_ne!(x.phase, "post-attach", "--no-auto-prune: {x:?}");
        }
    }
    for w in &d.warnings {
        assert!(
            run.stderr.contains(&format!("warning: {w}")),
            "warning {w:?} not on stderr\n{run}"
        );
    }

    // The agent file.
    assert_eq!(after.agent_id, canonical);
    assert_eq!(after.schema_version, "1");
    let after_ids = ids(&after);
    assert_eq!(
        after_ids.len(),
        after.tools.len(),
        "a tool is attached once"
    );
    for t in &after.tools {
        let core = t.reference.starts_with("builtin/");
        assert_eq!(t.kind, if core { "core" } else { "external" }, "{t:?}");
    }
    for a in &d.successful_attachments {
        let t = after
            .tools
            .iter()
            .find(|t| t.tool_id == a.tool_id)
            .unwrap_or_else(|| panic!("attached {a:?} is not in the agent file\n{run}"));
        assert_eq!(t.name, a.name);
        assert_eq!(t.match_score, Some(a.match_score));
    }
    for id in &d.detached_tools {
        assert!(
            !after_ids.contains(id),
            "detached {id} is still in the agent file\n{run}"
        );
    }
    for id in &d.preserved_tools {
        assert!(
            after_ids.contains(id),
            "preserved {id} is not in the file\n{run}"
        );
    }
    // Every tool held before left (and is reported) or is still there, at its slug;
    // every tool there now was held before or was matched now.
    let attached = d
        .successful_attachments
        .iter()
        .map(|a| a.tool_id.as_str())
        .collect::<BTreeSet<_>>();
    let old = before.as_ref().map_or(&[][..], |b| &b.tools[..]);
    for t in old {
        let gone = d.detached_tools.contains(&t.tool_id);
        let kept = after.tools.iter().find(|a| {
            slug_key(&a.reference) == slug_key(&t.reference)
                && timestamp(&a.attached_at) == timestamp(&t.attached_at)
        });
        assert!(
            gone || kept.is_some(),
            "{} vanished without a detachment\n{run}",
            t.reference
        );
    }
    for t in &after.tools {
        let was = old.iter().any(|o| {
            slug_key(&o.reference) == slug_key(&t.reference)
                && timestamp(&o.attached_at) == timestamp(&t.attached_at)
        });
        assert!(
            was || (attached.contains(t.tool_id.as_str()) && t.attached_at == after.modified_at),
            "{} appeared without being matched\n{run}",
            t.reference
        );
    }
    match &before {
        None => {
            assert_eq!(after.created_at, after.modified_at);
            assert!(
                run.stderr
                    .contains(&format!("Created {}", agent_path(env, canonical).display())),
                "{run}"
            );
        }
        Some(b) => {
            assert_eq!(after.created_at, b.created_at, "createdAt never changes");
            if after.tools == b.tools {
                assert_eq!(
                    std::fs::read(agent_path(env, canonical)).ok(),
                    before_bytes,
                    "nothing changed, so the file is not rewritten\n{run}"
                );
            } else {
                assert!(timestamp(&after.modified_at) > timestamp(&b.modified_at));
            }
        }
    }
    assert_no_temp_files(env);
    Outcome {
        resp,
        run,
        before,
        after,
    }
}

/// [`attach_as`] with the canonical spelling.
#[track_caller]
fn attach_ok(env: &TestEnv, agent: &str, args: &[&str], vars: &[(&str, &str)]) -> Outcome {
    attach_as(env, agent, agent, args, vars)
}

/// An attach that must fail with the contract's error document.
#[track_caller]
fn attach_fails(
    env: &TestEnv,
    agent: &str,
    args: &[&str],
    vars: &[(&str, &str)],
    exit: i32,
) -> AttachError {
    let run = attach_run(env, agent, args, vars);
    run.failure(exit);
    assert_eq!(run.stderr, "", "--json errors go to stdout only\n{run}");
    assert_eq!(
        keys(&run.json()),
        ["success", "error", "code"],
        "exactly the contract's keys\n{run}"
    );
    let doc: AttachError = run.parse();
    assert!(!doc.success);
    assert!(!doc.error.is_empty());
    doc
}

#[track_caller]
fn assert_no_temp_files(env: &TestEnv) {
    let left = find_prefixed(&env.catalog().join("agents"), ".toolctl-tmp-");
    assert!(left.is_empty(), "temporary files left behind: {left:?}");
}

/// A tool a test made.
#[derive(Debug, Clone)]
struct Made {
    reference: String,
    tool_id: String,
    bundle_id: String,
    slug: String,
}

/// Put `bundle/slug@version` whose description is `words`.
#[track_caller]
fn make_version(env: &TestEnv, bundle: &str, slug: &str, version: &str, words: &str) -> Made {
    let put = env.put_tool(
        bundle,
        &tool_doc_with(slug, version, json!({ "description": words })),
    );
    Made {
        reference: put["ref"].as_str().unwrap().to_owned(),
        tool_id: put["toolID"].as_str().unwrap().to_owned(),
        bundle_id: put["bundleID"].as_str().unwrap().to_owned(),
        slug: slug.to_owned(),
    }
}

#[track_caller]
fn make(env: &TestEnv, bundle: &str, slug: &str, words: &str) -> Made {
    make_version(env, bundle, slug, "v1", words)
}

/// A tool as `tool list` shows it (a built-in one, or one of the fixture catalog).
#[track_caller]
fn listed(env: &TestEnv, reference: &str) -> Made {
    let item = env
        .tool_list(&["--page-size", "1000"])
        .items
        .into_iter()
        .find(|t| t.reference == reference)
        .unwrap_or_else(|| panic!("{reference} is not listed"));
    Made {
        reference: item.reference,
        tool_id: item.tool_id,
        bundle_id: item.bundle_id,
        slug: item.slug,
    }
}

/// An agent file entry for `tool`, attached at `at`.
fn entry(tool: &Made, at: &str) -> Value {
    let core = tool.reference.starts_with("builtin/");
    json!({
        "toolID": tool.tool_id,
        "ref": tool.reference,
        "name": tool.slug,
        "kind": if core { "core" } else { "external" },
        "attachedAt": at,
        "matchScore": null,
    })
}

/// Write an agent file by hand.
fn write_agent(env: &TestEnv, agent: &str, tools: &[Value]) {
    let doc = json!({
        "schemaVersion": "1",
        "agentID": agent,
        "createdAt": "2025-01-01T00:00:00Z",
        "modifiedAt": "2025-01-01T00:00:00Z",
        "tools": tools,
    });
    let path = agent_path(env, agent);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
}

/// `2025-01-01T00:0n:00Z`: the n-th attach time of a hand-written agent.
fn at(n: u32) -> String {
    format!("2025-01-01T00:{n:02}:00Z")
}

fn show(env: &TestEnv, agent: &str) -> ShowDoc {
    env.run(&["--json", "agent", "show", agent])
        .success()
        .parse()
}

fn statuses(env: &TestEnv, agent: &str) -> BTreeMap<String, String> {
    show(env, agent)
        .tools
        .into_iter()
        .map(|t| (t.reference, t.status))
        .collect()
}

// --- 1. the seed's example -------------------------------------------------------------------

#[test]
fn the_seed_example_request_gives_the_contract_response() {
    let env = TestEnv::fixture();
    let agent = "agent-123e4567-e89b-12d3-a456-426614174000";
    // The agent holds weather and GitHub tools from an earlier task.
    let first = attach_ok(
        &env,
        agent,
        &[
            "--query",
            "weather forecast air quality alerts github pull requests issues repository",
            "--limit",
            "25",
            "--min-score",
            "0",
        ],
        &[],
    );
    assert!(first.after.tools.len() >= 9, "{}", first.run);
    let forecast = listed(&env, "weather/forecast@v2.1");
    let repo = listed(&env, "github/get-repo@v1");
    let held = ids(&first.after);
    assert!(held.contains(&forecast.tool_id) && held.contains(&repo.tool_id));

    // The seed's request: a new task, limit 15, min_score 50, two tools kept by toolID.
    let out = attach_ok(
        &env,
        agent,
        &[
            "--query",
            "I need tools to search documents and create charts",
            "--limit",
            "15",
            "--min-score",
            "50",
            "--keep",
            &forecast.tool_id,
            "--keep",
            &repo.tool_id,
        ],
        &[],
    );
    let d = &out.resp.details;
    assert!(d.processed_count > 0 && d.success_count > 0, "{}", out.run);
    assert_eq!(
        d.preserved_tools.iter().cloned().collect::<BTreeSet<_>>(),
        BTreeSet::from([forecast.tool_id.clone(), repo.tool_id.clone()]),
        "the kept tools are the preserved ones\n{}",
        out.run
    );
    assert!(
        !d.detached_tools.is_empty(),
        "the old task's tools leave\n{}",
        out.run
    );
    for x in &d.detachments {
        assert_ne!(x.tool_id, forecast.tool_id);
        assert_ne!(x.tool_id, repo.tool_id);
        assert!(matches!(
            x.phase.as_str(),
            "pre-attach" | "detachment" | "post-attach"
        ));
    }
    // Default MIN_MCP_TOOLS=7: the detachments never take the agent below 7 external tools.
    let external = out
        .after
        .tools
        .iter()
        .filter(|t| t.kind == "external")
        .count();
    assert!(external >= 7, "{}", out.run);
    // find-docs is the best match for "search documents".
    let best = &d.successful_attachments[0];
    assert_eq!(best.name, "find-docs");
    assert!(best.match_score >= 50.0 && best.match_score < 100.0);
    assert_eq!(d.scorer.as_deref(), Some("bm25"));
    assert!(d.warnings.is_empty());
}

#[test]
fn match_scores_are_absolute_and_min_score_and_limit_filter_them() {
    let env = TestEnv::fixture();
    let task = [
        "--query",
        "weather forecast for Oslo tomorrow with air quality",
    ];
    // Everything that scores: the ranking the filters cut.
    let all = attach_ok(
        &env,
        &agent(1),
        &[task[0], task[1], "--min-score", "0", "--limit", "25"],
        &[],
    );
    let scores: Vec<(String, f64)> = all
        .resp
        .details
        .successful_attachments
        .iter()
        .map(|a| (a.tool_id.clone(), a.match_score))
        .collect();
    assert!(scores.len() >= 4, "{}", all.run);
    assert!(scores.iter().any(|(_, s)| *s < 100.0 && *s > 0.0));

    // --min-score keeps exactly the candidates at or above it.
    let cut = 60.0;
    let out = attach_ok(
        &env,
        &agent(2),
        &[task[0], task[1], "--min-score", "60", "--limit", "25"],
        &[],
    );
    let want: Vec<&(String, f64)> = scores.iter().filter(|(_, s)| *s >= cut).collect();
    assert_eq!(out.resp.details.processed_count, scores.len());
    assert_eq!(
        out.resp.details.passed_filter_count,
        want.len(),
        "{}",
        out.run
    );
    let got: Vec<(String, f64)> = out
        .resp
        .details
        .successful_attachments
        .iter()
        .map(|a| (a.tool_id.clone(), a.match_score))
        .collect();
    assert_eq!(got, want.into_iter().cloned().collect::<Vec<_>>());

    // --limit takes the best N candidates before the filter.
    let out = attach_ok(
        &env,
        &agent(3),
        &[task[0], task[1], "--min-score", "0", "--limit", "2"],
        &[],
    );
    assert_eq!(out.resp.details.processed_count, 2);
    let got: Vec<&str> = out
        .resp
        .details
        .successful_attachments
        .iter()
        .map(|a| a.tool_id.as_str())
        .collect();
    assert_eq!(got, [scores[0].0.as_str(), scores[1].0.as_str()]);

    // Scores are absolute: the best match is not rescaled to 100, and a minimum above it
    // passes nothing.
    let best = scores[0].1;
    assert!(best < 100.0, "{scores:?}");
    let above = format!("{}", (best + 1.0).min(100.0));
    let out = attach_ok(
        &env,
        &agent(4),
        &[task[0], task[1], "--min-score", &above],
        &[],
    );
    assert_eq!(out.resp.details.success_count, 0, "{}", out.run);
    assert_eq!(out.resp.details.passed_filter_count, 0, "{}", out.run);

    // Another scorer is named in the response; its scores are absolute too.
    let out = attach_ok(
        &env,
        &agent(5),
        &[task[0], task[1], "--scorer", "keyword"],
        &[],
    );
    assert_eq!(out.resp.details.scorer.as_deref(), Some("keyword"));
    assert!(out.resp.details.success_count >= 1);

    // A query nothing matches: nothing processed, nothing attached, an empty agent.
    let out = attach_ok(&env, &agent(6), &["--query", "xyzzy plugh"], &[]);
    assert_eq!(out.resp.details.processed_count, 0);
    assert!(out.after.tools.is_empty());
}

#[test]
fn unusable_tools_are_never_attached() {
    let env = TestEnv::fixture();
    // Disabled tools, tools of the disabled bundle, the unavailable Go tool, disabled exec.
    let unusable: BTreeMap<String, String> = env
        .tool_list(&["--include-disabled", "--page-size", "1000"])
        .items
        .into_iter()
        .filter(|t| !(t.is_enabled && t.bundle_enabled && t.available))
        .map(|t| (t.tool_id, t.reference))
        .collect();
    assert!(unusable.len() >= 6, "{unusable:?}");
    let out = attach_ok(
        &env,
        &agent(1),
        &[
            "--query",
            "convert currency exchange rate stock quote image search photos weather report run shell command",
            "--min-score",
            "0",
            "--limit",
            "25",
        ],
        &[],
    );
    assert!(out.resp.details.success_count > 0);
    for a in &out.resp.details.successful_attachments {
        assert!(
            !unusable.contains_key(&a.tool_id),
            "attached {}, which cannot be called",
            unusable[&a.tool_id]
        );
    }
}

#[test]
fn a_repeated_attach_changes_nothing() {
    let env = TestEnv::fixture();
    let args = [
        "--query",
        "open a github issue about a bug",
        "--min-score",
        "40",
    ];
    let vars = [("MIN_MCP_TOOLS", "0")];
    let first = attach_ok(&env, &agent(1), &args, &vars);
    assert!(first.resp.details.success_count > 0);
    let bytes = std::fs::read(agent_path(&env, &agent(1))).unwrap();
    let again = attach_ok(&env, &agent(1), &args, &vars);
    assert_eq!(again.after, first.after);
    assert!(again.resp.details.detached_tools.is_empty());
    assert_eq!(
        again.attached(),
        first.attached(),
        "the same tools match again (already attached)"
    );
    assert_eq!(std::fs::read(agent_path(&env, &agent(1))).unwrap(), bytes);
}

// --- 2. agents as files ----------------------------------------------------------------------

#[test]
fn an_agent_is_created_on_first_use_under_any_spelling_of_its_id() {
    let env = TestEnv::new();
    let a = agent(0xabc);
    // No agents folder before the first attach.
    assert!(!env.catalog().join("agents").exists());
    let out = attach_as(&env, bare(&a), &a, &[], &[]);
    assert!(out.before.is_none());
    assert!(out.after.tools.is_empty());
    assert_eq!(
        out.resp.message,
        format!(
            "Successfully processed 0 candidates (0 passed min_score=35.0%), attached 0 tool(s) to agent {a}"
        )
    );
    let files: Vec<_> = std::fs::read_dir(env.catalog().join("agents"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(files, [format!("{a}.json")]);

    // The prefixed, upper-case and mixed spellings all name the same file.
    let upper = a.to_uppercase();
    let upper_bare = bare(&a).to_uppercase();
    let mixed = format!("Agent-{}", bare(&a).to_uppercase());
    for spelled in [
        a.as_str(),
        upper.as_str(),
        upper_bare.as_str(),
        mixed.as_str(),
    ] {
        let out = attach_as(&env, spelled, &a, &["--query", "what time is it"], &[]);
        assert!(out.before.is_some(), "{spelled} made a new agent");
        assert_eq!(out.resp.details.target_agent, a);
    }
    let files: Vec<_> = std::fs::read_dir(env.catalog().join("agents"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(files, [format!("{a}.json")], "one file for every spelling");
    let list: Vec<ListItem> = env.run(&["--json", "agent", "list"]).success().parse();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].agent_id, a);

    // "what time is it" matches the built-in `now`: a core tool.
    let now = read_agent(&env, &a).unwrap();
    assert!(
        now.tools
            .iter()
            .any(|t| t.reference == "builtin/now@v1" && t.kind == "core"),
        "{now:?}"
    );
    // Unknown fields of a hand-edited agent file survive a rewrite.
    let path = agent_path(&env, &a);
    let mut raw = read_json(&path);
    raw["x-note"] = json!("owned by team platform");
    std::fs::write(&path, serde_json::to_vec_pretty(&raw).unwrap()).unwrap();
    env.run(&["attach", &a, "--query", "read a file", "--min-score", "0"])
        .success();
    let raw = read_json(&path);
    assert_eq!(raw["x-note"], "owned by team platform");
}

// --- 3. validation ---------------------------------------------------------------------------

#[test]
fn bad_requests_are_validation_errors_and_leave_the_agent_file_alone() {
    let env = TestEnv::fixture();
    let a = agent(1);
    attach_ok(&env, &a, &["--query", "weather forecast"], &[]);
    let path = agent_path(&env, &a);
    let bytes = std::fs::read(&path).unwrap();

    // Agent IDs that are not UUIDs: nothing is created.
    for bad in [
        "not-a-uuid",
        "agent-",
        "agent-xyz",
        "123e4567e89b12d3a456426614174000",
        "{123e4567-e89b-12d3-a456-426614174000}",
        "urn:uuid:123e4567-e89b-12d3-a456-426614174000",
        "agent-123e4567-e89b-12d3-a456-42661417400",
        "agent_123e4567-e89b-12d3-a456-426614174000",
        "",
    ] {
        let doc = attach_fails(&env, bad, &["--query", "weather"], &[], 3);
        assert_eq!(doc.code, "VALIDATION_ERROR", "{bad:?}: {doc:?}");
        assert!(doc.error.contains("not an agent ID"), "{doc:?}");
    }
    let files = std::fs::read_dir(env.catalog().join("agents"))
        .unwrap()
        .count();
    assert_eq!(files, 1, "a bad ID creates no file");

    let q = ["--query", "github issues"];
    let cases: &[(&[&str], &str)] = &[
        (&["--limit", "0"], "--limit 0"),
        (&["--limit", "26"], "--limit 26"),
        (&["--limit", "-1"], "--limit -1"),
        (&["--min-score", "-1"], "--min-score -1"),
        (&["--min-score", "101"], "--min-score 101"),
        (&["--min-score", "100.5"], "--min-score 100.5"),
        (&["--min-score", "NaN"], "--min-score NaN"),
        (&["--keep", "no-such-tool"], "--keep 'no-such-tool'"),
        (
            &["--keep", "weather/forecast@v9"],
            "--keep 'weather/forecast@v9'",
        ),
    ];
    for (extra, says) in cases {
        let mut args = q.to_vec();
        args.extend_from_slice(extra);
        let doc = attach_fails(&env, &a, &args, &[], 3);
        assert_eq!(doc.code, "VALIDATION_ERROR", "{extra:?}");
        assert!(doc.error.contains(says), "{extra:?}: {doc:?}");
        assert_eq!(
            std::fs::read(&path).unwrap(),
            bytes,
            "{extra:?} changed the file"
        );
    }
    // The same without a query: the request is checked all the same.
    let doc = attach_fails(&env, &a, &["--limit", "0"], &[], 3);
    assert_eq!(doc.code, "VALIDATION_ERROR");
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    // The bounds themselves are fine.
    attach_ok(
        &env,
        &a,
        &[
            "--query",
            "github issues",
            "--limit",
            "25",
            "--min-score",
            "100",
        ],
        &[],
    );
    attach_ok(
        &env,
        &a,
        &[
            "--query",
            "github issues",
            "--limit",
            "1",
            "--min-score",
            "0",
        ],
        &[],
    );
}

#[test]
fn bad_settings_are_validation_errors_and_leave_the_agent_file_alone() {
    let env = TestEnv::fixture();
    let a = agent(1);
    attach_ok(&env, &a, &["--query", "weather forecast"], &[]);
    let path = agent_path(&env, &a);
    let bytes = std::fs::read(&path).unwrap();
    let q = ["--query", "github issues"];
    let cases: &[(&[(&str, &str)], &str)] = &[
        (&[("MAX_MCP_TOOLS", "abc")], "MAX_MCP_TOOLS"),
        (&[("MAX_MCP_TOOLS", "-3")], "MAX_MCP_TOOLS"),
        (&[("MAX_MCP_TOOLS", "")], "MAX_MCP_TOOLS"),
        (&[("MAX_TOTAL_TOOLS", "1.5")], "MAX_TOTAL_TOOLS"),
        (&[("MIN_MCP_TOOLS", "many")], "MIN_MCP_TOOLS"),
        (
            &[("MIN_MCP_TOOLS", "9"), ("MAX_MCP_TOOLS", "5")],
            "MIN_MCP_TOOLS=9 (environment) is above MAX_MCP_TOOLS=5 (environment)",
        ),
        // The default minimum (7) is above a maximum of 5 set alone.
        (
            &[("MAX_MCP_TOOLS", "5")],
            "MIN_MCP_TOOLS=7 (default) is above MAX_MCP_TOOLS=5 (environment)",
        ),
        (
            &[("MIN_MCP_TOOLS", "8"), ("MAX_TOTAL_TOOLS", "4")],
            "MIN_MCP_TOOLS=8 (environment) is above MAX_TOTAL_TOOLS=4 (environment)",
        ),
        (&[("DEFAULT_DROP_RATE", "2")], "DEFAULT_DROP_RATE"),
        (&[("DEFAULT_DROP_RATE", "-0.1")], "DEFAULT_DROP_RATE"),
        (&[("DEFAULT_DROP_RATE", "half")], "DEFAULT_DROP_RATE"),
        (
            &[("EXCLUDE_LETTA_CORE_TOOLS", "maybe")],
            "EXCLUDE_LETTA_CORE_TOOLS",
        ),
        (&[("FIND_TOOLS_MAX_LIMIT", "0")], "FIND_TOOLS_MAX_LIMIT"),
        (&[("FIND_TOOLS_MAX_LIMIT", "x")], "FIND_TOOLS_MAX_LIMIT"),
    ];
    for (vars, says) in cases {
        let doc = attach_fails(&env, &a, &q, vars, 3);
        assert_eq!(doc.code, "VALIDATION_ERROR", "{vars:?}");
        assert!(doc.error.contains(says), "{vars:?}: {doc:?}");
        assert_eq!(
            std::fs::read(&path).unwrap(),
            bytes,
            "{vars:?} changed the file"
        );
    }

    // FIND_TOOLS_MAX_LIMIT moves the largest --limit, both ways.
    attach_ok(
        &env,
        &a,
        &["--query", "github", "--limit", "26"],
        &[("FIND_TOOLS_MAX_LIMIT", "30")],
    );
    let doc = attach_fails(
        &env,
        &a,
        &["--query", "github", "--limit", "6"],
        &[("FIND_TOOLS_MAX_LIMIT", "5")],
        3,
    );
    assert!(doc.error.contains("between 1 and 5"), "{doc:?}");

    // The same settings in toolctl.json, and the environment over them.
    env.edit_config(|c| c["attach"] = json!({ "defaultDropRate": 1.5 }));
    let doc = attach_fails(&env, &a, &q, &[], 3);
    assert!(doc.error.contains("defaultDropRate"), "{doc:?}");
    attach_ok(
        &env,
        &a,
        &["--query", "github issues"],
        &[("DEFAULT_DROP_RATE", "0.5")],
    );
    let bytes_after = std::fs::read(&path).unwrap();
    env.edit_config(|c| c["attach"] = json!({ "minMcpTools": 10, "maxMcpTools": 8 }));
    let doc = attach_fails(&env, &a, &q, &[], 3);
    assert!(
        doc.error
            .contains("MIN_MCP_TOOLS=10 (toolctl.json) is above MAX_MCP_TOOLS=8 (toolctl.json)"),
        "{doc:?}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), bytes_after);
    attach_ok(&env, &a, &q, &[("MIN_MCP_TOOLS", "3")]);
}

#[test]
fn usage_errors_take_the_contract_shape_with_exit_2() {
    let env = TestEnv::fixture();
    let run = env.run(&["--json", "attach"]);
    run.failure(2);
    assert_eq!(keys(&run.json()), ["success", "error", "code"], "{run}");
    let doc: AttachError = run.parse();
    assert!(!doc.success);
    assert_eq!(doc.code, "VALIDATION_ERROR");
    // Every usage error of attach, not only a missing AGENT: the command's own promise is
    // "attach answers in the attach contract's shape, usage errors included".
    let mut wrong = Vec::new();
    for args in [
        &["--no-such-flag"][..],
        &["extra-argument"][..],
        &["--limit", "ten"][..],
        &["--min-score", "high"][..],
        &["--scorer", "magic"][..],
        &["--query"][..],
        &["--keep"][..],
    ] {
        let mut all = vec!["--json", "attach", "3f2b8c1e-9d4a-4e6b-8a7c-000000000001"];
        all.extend_from_slice(args);
        let run = env.run(&all);
        run.failure(2);
        assert_eq!(run.stderr, "", "{run}");
        if keys(&run.json()) != ["success", "error", "code"] {
            wrong.push(format!("{args:?} → {}", run.stdout.replace('\n', " ")));
        } else {
            let doc: AttachError = run.parse();
            assert_eq!(doc.code, "VALIDATION_ERROR", "{run}");
        }
    }
    assert!(
        wrong.is_empty(),
        "usage errors of attach not in the contract's shape:\n{}",
        wrong.join("\n")
    );
    assert!(!env.catalog().join("agents").exists());
    // Without --json, a usage error is text on stderr.
    let run = env.run(&["attach"]);
    run.failure(2);
    run.stderr_has("Usage: toolctl attach");
}

#[test]
fn a_corrupt_agent_file_is_refused_and_left_byte_for_byte() {
    let env = TestEnv::fixture();
    let a = agent(1);
    let forecast = listed(&env, "weather/forecast@v2.1");
    let good = |extra: Value| {
        let mut t = entry(&forecast, &at(1));
        for (k, v) in extra.as_object().unwrap() {
            t[k] = v.clone();
        }
        json!({
            "schemaVersion": "1",
            "agentID": a,
            "createdAt": at(0),
            "modifiedAt": at(1),
            "tools": [t],
        })
    };
    let dup = {
        let mut doc = good(json!({}));
        let t = doc["tools"][0].clone();
        doc["tools"].as_array_mut().unwrap().push(t);
        doc
    };
    let wrong_id = {
        let mut doc = good(json!({}));
        doc["agentID"] = json!(agent(2));
        doc
    };
    let no_tools = {
        let mut doc = good(json!({}));
        doc.as_object_mut().unwrap().shift_remove("tools");
        doc
    };
    let texts: Vec<(String, &str)> = vec![
        ("{ not json".to_owned(), "not JSON"),
        (String::new(), "empty"),
        ("[]".to_owned(), "an array"),
        (good(json!({ "kind": "plugin" })).to_string(), "bad kind"),
        (
            good(json!({ "matchScore": 150 })).to_string(),
            "score above 100",
        ),
        (good(json!({ "toolID": "nope" })).to_string(), "bad toolID"),
        (
            good(json!({ "attachedAt": "yesterday" })).to_string(),
            "bad time",
        ),
        (
            good(json!({ "surprise": 1 })).to_string(),
            "unknown tool field",
        ),
        (dup.to_string(), "a tool twice"),
        (wrong_id.to_string(), "another agent's ID"),
        (no_tools.to_string(), "no tools"),
    ];
    let path = agent_path(&env, &a);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    for (text, what) in &texts {
        std::fs::write(&path, text).unwrap();
        for args in [
            &["--query", "weather forecast", "--min-score", "0"][..],
            &[][..],
        ] {
            let doc = attach_fails(&env, &a, args, &[("MIN_MCP_TOOLS", "0")], 3);
            assert_eq!(doc.code, "VALIDATION_ERROR", "{what}: {doc:?}");
            assert_eq!(
                std::fs::read_to_string(&path).unwrap(),
                *text,
                "{what}: the file was changed"
            );
        }
        // agent show and detach refuse it too, and leave it.
        let err = env.json_error(&["agent", "show", &a], 3);
        assert_eq!(err.error.code, "VALIDATION_ERROR", "{what}");
        let err = env.json_error(&["agent", "detach", &a, "--all"], 3);
        assert_eq!(err.error.code, "VALIDATION_ERROR", "{what}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), *text, "{what}");
        assert_no_temp_files(&env);
    }
}

// --- 4. the detachment phase and protection --------------------------------------------------

/// A catalog for the protection tests: two bundles of tools with words of their own.
struct Orchard {
    env: TestEnv,
    keep_me: Made,
    cfg: Made,
    envp: Made,
    old_a: Made,
    old_b: Made,
    old_c: Made,
    new_x: Made,
    readfile: Made,
}

impl Orchard {
    fn new() -> Self {
        let env = TestEnv::new();
        env.bundle("north");
        env.bundle("south");
        let keep_me = make(&env, "north", "keep-me", "apple orchard harvest");
        let cfg = make(&env, "north", "cfg-protected", "banana grove plantation");
        let envp = make(&env, "south", "env-protected", "cherry blossom tree");
        let old_a = make(&env, "north", "old-a", "damson plum jam");
        let old_b = make(&env, "north", "old-b", "elderflower cordial syrup");
        let old_c = make(&env, "south", "old-c", "fig leaf salad");
        let new_x = make(&env, "south", "new-x", "kiwi mango smoothie");
        let readfile = listed(&env, "builtin/readfile@v1");
        env.edit_config(|c| c["attach"] = json!({ "protectedTools": ["cfg-protected"] }));
        Self {
            env,
            keep_me,
            cfg,
            envp,
            old_a,
            old_b,
            old_c,
            new_x,
            readfile,
        }
    }

    /// An agent holding the six external tools (old-b attached first) and readfile.
    fn agent(&self, n: u32) -> String {
        let a = agent(n);
        write_agent(
            &self.env,
            &a,
            &[
                entry(&self.keep_me, &at(2)),
                entry(&self.cfg, &at(3)),
                entry(&self.envp, &at(4)),
                entry(&self.old_a, &at(5)),
                entry(&self.old_b, &at(1)),
                entry(&self.old_c, &at(6)),
                entry(&self.readfile, &at(0)),
            ],
        );
        a
    }
}

fn refs(tools: &[&Made]) -> BTreeSet<String> {
    tools.iter().map(|t| t.reference.clone()).collect()
}

#[test]
fn the_detachment_phase_detaches_unmatched_unprotected_external_tools() {
    let o = Orchard::new();
    let env = &o.env;
    let query = ["--query", "kiwi mango smoothie"];

    // --keep and protectedTools (toolctl.json) protect; core tools stay; MIN_MCP_TOOLS=0.
    let a = o.agent(1);
    let out = attach_ok(
        env,
        &a,
        &[query[0], query[1], "--keep", "north/keep-me"],
        &[("MIN_MCP_TOOLS", "0")],
    );
    assert_eq!(out.attached(), BTreeSet::from([o.new_x.tool_id.clone()]));
    assert_eq!(
        out.phases(),
        [&o.envp, &o.old_a, &o.old_b, &o.old_c]
            .iter()
            .map(|t| (t.reference.clone(), "detachment".to_owned()))
            .collect::<BTreeMap<_, _>>(),
        "{}",
        out.run
    );
    assert_eq!(
        refs_of(&out.after),
        refs(&[&o.keep_me, &o.cfg, &o.readfile, &o.new_x])
    );
    assert_eq!(
        out.resp
            .details
            .preserved_tools
            .iter()
            .cloned()
            .collect::<BTreeSet<_>>(),
        BTreeSet::from([o.keep_me.tool_id.clone(), o.cfg.tool_id.clone()]),
        "preserved: the held tools protected by --keep or by name"
    );

    // NEVER_DETACH_TOOLS (any case, bundle/slug) replaces protectedTools: cfg-protected leaves.
    let a = o.agent(2);
    let out = attach_ok(
        env,
        &a,
        &query,
        &[
            ("MIN_MCP_TOOLS", "0"),
            ("NEVER_DETACH_TOOLS", " South/ENV-Protected , nothing-here"),
        ],
    );
    assert_eq!(
        refs_of(&out.after),
        refs(&[&o.envp, &o.readfile, &o.new_x]),
        "{}",
        out.run
    );
    assert!(out.phases().contains_key(&o.cfg.reference));

    // PROTECTED_TOOLS and NEVER_DETACH_TOOLS add up; a name is the exported name or slug.
    let a = o.agent(3);
    let out = attach_ok(
        env,
        &a,
        &query,
        &[
            ("MIN_MCP_TOOLS", "0"),
            ("NEVER_DETACH_TOOLS", "OLD-A"),
            ("PROTECTED_TOOLS", "old-c,cfg-protected"),
        ],
    );
    assert_eq!(
        refs_of(&out.after),
        refs(&[&o.old_a, &o.old_c, &o.cfg, &o.readfile, &o.new_x]),
        "{}",
        out.run
    );

    // Set but empty, the variables protect nothing: not even protectedTools.
    let a = o.agent(4);
    let out = attach_ok(
        env,
        &a,
        &query,
        &[("MIN_MCP_TOOLS", "0"), ("NEVER_DETACH_TOOLS", "")],
    );
    assert_eq!(
        refs_of(&out.after),
        refs(&[&o.readfile, &o.new_x]),
        "{}",
        out.run
    );

    // A name must match whole: a prefix protects nothing.
    let a = o.agent(5);
    let out = attach_ok(
        env,
        &a,
        &query,
        &[("MIN_MCP_TOOLS", "0"), ("NEVER_DETACH_TOOLS", "old,keep")],
    );
    assert_eq!(
        refs_of(&out.after),
        refs(&[&o.readfile, &o.new_x]),
        "{}",
        out.run
    );

    // Without a query nothing is detached (all under the limits).
    let a = o.agent(6);
    let out = attach_ok(env, &a, &[], &[("MIN_MCP_TOOLS", "0")]);
    assert!(out.resp.details.detached_tools.is_empty());
    assert_eq!(out.after.tools, out.before.unwrap().tools);
}

#[test]
fn the_detachment_phase_stops_at_min_mcp_tools_oldest_first() {
    let o = Orchard::new();
    let env = &o.env;
    // Six external tools, MIN_MCP_TOOLS=5: one may leave — the oldest unprotected (old-b).
    let a = o.agent(1);
    let out = attach_ok(
        env,
        &a,
        &["--query", "kiwi mango smoothie", "--no-auto-prune"],
        &[("MIN_MCP_TOOLS", "5")],
    );
    assert_eq!(
        out.phases(),
        BTreeMap::from([(o.old_b.reference.clone(), "detachment".to_owned())]),
        "{}",
        out.run
    );
    assert_eq!(out.after.tools.len(), 7);

    // MIN_MCP_TOOLS from toolctl.json, the same way.
    env.edit_config(|c| c["attach"]["minMcpTools"] = json!(4));
    let a = o.agent(2);
    let out = attach_ok(
        env,
        &a,
        &[
            "--query",
            "kiwi mango smoothie",
            "--no-auto-prune",
            "--keep",
            "north/keep-me",
        ],
        &[],
    );
    assert_eq!(
        out.phases(),
        BTreeMap::from([
            (o.old_b.reference.clone(), "detachment".to_owned()),
            (o.envp.reference.clone(), "detachment".to_owned()),
        ]),
        "the two oldest unprotected leave\n{}",
        out.run
    );
    // A query matching a held tool protects it: old-a stays although unprotected by name.
    let a = o.agent(3);
    let out = attach_ok(
        env,
        &a,
        &["--query", "damson plum jam kiwi mango", "--min-score", "0"],
        &[("MIN_MCP_TOOLS", "0")],
    );
    assert!(ids(&out.after).contains(&o.old_a.tool_id), "{}", out.run);
    assert!(ids(&out.after).contains(&o.new_x.tool_id), "{}", out.run);
    let attached = out
        .resp
        .details
        .successful_attachments
        .iter()
        .find(|x| x.tool_id == o.old_a.tool_id)
        .unwrap()
        .clone();
    // Already attached: the entry keeps its attach time, with the new score.
    let t = out
        .after
        .tools
        .iter()
        .find(|t| t.tool_id == o.old_a.tool_id)
        .unwrap();
    assert_eq!(timestamp(&t.attached_at), timestamp(&at(5)));
    assert_eq!(t.match_score, Some(attached.match_score));

    // Least relevant first, age only among equals: old-a shares a word with the query (though
    // below --min-score, so not matched: a quarter of the query, against new-x's three) and
    // outlasts the younger old-c, which shares none.
    let a = o.agent(4);
    let out = attach_ok(
        env,
        &a,
        &[
            "--query",
            "kiwi mango smoothie damson",
            "--min-score",
            "60",
            "--no-auto-prune",
            "--keep",
            "north/keep-me",
        ],
        &[("MIN_MCP_TOOLS", "3")],
    );
    assert_eq!(
        out.attached(),
        BTreeSet::from([o.new_x.tool_id.clone()]),
        "{}",
        out.run
    );
    assert_eq!(
        out.phases(),
        [&o.old_b, &o.envp, &o.old_c]
            .iter()
            .map(|t| (t.reference.clone(), "detachment".to_owned()))
            .collect::<BTreeMap<_, _>>(),
        "{}",
        out.run
    );
    assert!(ids(&out.after).contains(&o.old_a.tool_id));
}

// --- 5. limits -------------------------------------------------------------------------------

/// Six external tools t1…t6 (t1 attached first) and the built-in `now`.
fn limits_world() -> (TestEnv, Vec<Made>, Made) {
    let env = TestEnv::new();
    env.bundle("lim");
    let words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"];
    let tools: Vec<Made> = words
        .iter()
        .enumerate()
        .map(|(i, w)| make(&env, "lim", &format!("t{}", i + 1), &format!("{w} {w}")))
        .collect();
    let now = listed(&env, "builtin/now@v1");
    (env, tools, now)
}

fn hold_all(env: &TestEnv, a: &str, tools: &[Made], now: &Made) {
    let mut entries: Vec<Value> = tools
        .iter()
        .enumerate()
        .map(|(i, t)| entry(t, &at(i as u32 + 1)))
        .collect();
    entries.push(entry(now, &at(0)));
    write_agent(env, a, &entries);
}

#[test]
fn limits_trim_the_oldest_tools_without_a_query() {
    let (env, t, now) = limits_world();
    let a = agent(1);
    hold_all(&env, &a, &t, &now);

    // MAX_MCP_TOOLS=4: t1 and t2 (the oldest) leave; the core tool does not count.
    let out = attach_ok(
        &env,
        &a,
        &[],
        &[("MAX_MCP_TOOLS", "4"), ("MIN_MCP_TOOLS", "0")],
    );
    assert_eq!(
        out.phases(),
        BTreeMap::from([
            (t[0].reference.clone(), "limits".to_owned()),
            (t[1].reference.clone(), "limits".to_owned()),
        ]),
        "{}",
        out.run
    );
    assert_eq!(
        out.resp.details.detached_tools,
        [t[0].tool_id.clone(), t[1].tool_id.clone()],
        "oldest first"
    );
    assert!(out.resp.details.warnings.is_empty());

    // MAX_TOTAL_TOOLS=3 counts the core tool too: two more externals leave (t3, t4).
    let out = attach_ok(
        &env,
        &a,
        &[],
        &[("MAX_TOTAL_TOOLS", "3"), ("MIN_MCP_TOOLS", "0")],
    );
    assert_eq!(
        out.resp.details.detached_tools,
        [t[2].tool_id.clone(), t[3].tool_id.clone()]
    );
    assert_eq!(refs_of(&out.after), refs(&[&t[4], &t[5], &now]));

    // MAX_TOTAL_TOOLS=2 with MIN_MCP_TOOLS=2: the floor and the core tool hold; a warning.
    let out = attach_ok(
        &env,
        &a,
        &[],
        &[("MAX_TOTAL_TOOLS", "2"), ("MIN_MCP_TOOLS", "2")],
    );
    assert!(out.resp.details.detached_tools.is_empty());
    assert_eq!(out.resp.details.warnings.len(), 1, "{}", out.run);
    let w = &out.resp.details.warnings[0];
    assert!(
        w.contains("MAX_TOTAL_TOOLS=2") && w.contains("MIN_MCP_TOOLS=2 keeps 2 more"),
        "{w}"
    );
    out.run.stderr_has(&format!("warning: {w}"));

    // With EXCLUDE_LETTA_CORE_TOOLS=false the core tool may go for MAX_TOTAL_TOOLS.
    let out = attach_ok(
        &env,
        &a,
        &[],
        &[
            ("MAX_TOTAL_TOOLS", "2"),
            ("MIN_MCP_TOOLS", "2"),
            ("EXCLUDE_LETTA_CORE_TOOLS", "false"),
        ],
    );
    assert_eq!(
        out.phases(),
        BTreeMap::from([(now.reference.clone(), "limits".to_owned())]),
        "{}",
        out.run
    );
    assert!(out.resp.details.warnings.is_empty());
    assert_eq!(refs_of(&out.after), refs(&[&t[4], &t[5]]));
}

#[test]
fn limits_come_from_toolctl_json_and_the_environment_wins() {
    let (env, t, now) = limits_world();
    env.edit_config(|c| c["attach"] = json!({ "maxMcpTools": 3, "minMcpTools": 1 }));
    let a = agent(1);
    hold_all(&env, &a, &t, &now);
    let out = attach_ok(&env, &a, &["-q"], &[("MAX_MCP_TOOLS", "5")]);
    assert_eq!(out.resp.details.detached_tools, [t[0].tool_id.clone()]);
    let out = attach_ok(&env, &a, &[], &[]);
    assert_eq!(
        out.resp.details.detached_tools,
        [t[1].tool_id.clone(), t[2].tool_id.clone()]
    );
    assert_eq!(refs_of(&out.after), refs(&[&t[3], &t[4], &t[5], &now]));
}

#[test]
fn protected_tools_over_a_limit_stay_with_a_warning() {
    let (env, t, now) = limits_world();
    let a = agent(1);
    hold_all(&env, &a, &t, &now);
    // t1 and t2 protected by name, t3 by --keep; MAX_MCP_TOOLS=2: the three stay, the others go.
    let out = attach_ok(
        &env,
        &a,
        &["--keep", &t[2].tool_id],
        &[
            ("MAX_MCP_TOOLS", "2"),
            ("MIN_MCP_TOOLS", "0"),
            ("NEVER_DETACH_TOOLS", "t1,lim/T2"),
        ],
    );
    assert_eq!(
        refs_of(&out.after),
        refs(&[&t[0], &t[1], &t[2], &now]),
        "{}",
        out.run
    );
    assert_eq!(
        out.resp.details.detached_tools,
        [
            t[3].tool_id.clone(),
            t[4].tool_id.clone(),
            t[5].tool_id.clone()
        ]
    );
    assert_eq!(
        out.resp
            .details
            .preserved_tools
            .iter()
            .cloned()
            .collect::<BTreeSet<_>>(),
        BTreeSet::from([
            t[0].tool_id.clone(),
            t[1].tool_id.clone(),
            t[2].tool_id.clone()
        ])
    );
    assert_eq!(out.resp.details.warnings.len(), 1, "{}", out.run);
    let w = &out.resp.details.warnings[0];
    assert!(
        w.contains("3 external tools, more than MAX_MCP_TOOLS=2")
            && w.contains("3 of them are protected"),
        "{w}"
    );
    out.run.stderr_has(&format!("warning: {w}"));

    // Matched tools are protected too: a query matching five tools with MAX_MCP_TOOLS=2.
    let b = agent(2);
    let out = attach_ok(
        &env,
        &b,
        &[
            "--query",
            "alpha bravo charlie delta echo",
            "--min-score",
            "0",
        ],
        &[("MAX_MCP_TOOLS", "2"), ("MIN_MCP_TOOLS", "0")],
    );
    assert_eq!(out.resp.details.success_count, 5, "{}", out.run);
    assert_eq!(out.after.tools.len(), 5);
    assert_eq!(out.resp.details.warnings.len(), 1, "{}", out.run);
    assert!(out.resp.details.warnings[0].contains("MAX_MCP_TOOLS=2"));

    // With -q the warning stays in the document but not on stderr.
    let run = attach_run(
        &env,
        &a,
        &["-q"],
        &[
            ("MAX_MCP_TOOLS", "2"),
            ("MIN_MCP_TOOLS", "0"),
            ("NEVER_DETACH_TOOLS", "t1,t2,t3"),
        ],
    );
    run.success();
    let resp: AttachResponse = run.parse();
    assert_eq!(resp.details.warnings.len(), 1);
    assert_eq!(run.stderr, "");
}

// --- 6. post-attach pruning ------------------------------------------------------------------

#[test]
fn post_attach_pruning_removes_what_no_auto_prune_keeps() {
    let env = TestEnv::new();
    env.bundle("p");
    let held: Vec<Made> = ["umber", "violet", "walnut", "xanadu", "yellow"]
        .iter()
        .enumerate()
        .map(|(i, w)| make(&env, "p", &format!("u{}", i + 1), w))
        .collect();
    let x = make(&env, "p", "x", "kiwi");
    let y = make(&env, "p", "y", "mango");
    let hold = |a: &str| {
        let entries: Vec<Value> = held
            .iter()
            .enumerate()
            .map(|(i, t)| entry(t, &at(i as u32 + 1)))
            .collect();
        write_agent(&env, a, &entries);
    };
    let query = ["--query", "kiwi mango", "--min-score", "0"];
    let min = [("MIN_MCP_TOOLS", "3")];

    // Default: detachment takes u1, u2 (down to 3), x and y arrive, and post-attach pruning
    // keeps max(⌊5 × 0.4⌋, 3) = 3 external tools: u3 and u4 leave.
    let a = agent(1);
    hold(&a);
    let out = attach_ok(&env, &a, &query, &min);
    assert_eq!(
        out.attached(),
        BTreeSet::from([x.tool_id.clone(), y.tool_id.clone()])
    );
    let phases: Vec<(String, String)> = out
        .resp
        .details
        .detachments
        .iter()
        .map(|d| (d.reference.clone(), d.phase.clone()))
        .collect();
    assert_eq!(
        phases,
        [
            (held[0].reference.clone(), "detachment".to_owned()),
            (held[1].reference.clone(), "detachment".to_owned()),
            (held[2].reference.clone(), "post-attach".to_owned()),
            (held[3].reference.clone(), "post-attach".to_owned()),
        ],
        "{}",
        out.run
    );
    assert_eq!(refs_of(&out.after), refs(&[&held[4], &x, &y]));

    // --no-auto-prune: the post-attach pruning is skipped.
    let b = agent(2);
    hold(&b);
    let mut args = query.to_vec();
    args.push("--no-auto-prune");
    let out = attach_ok(&env, &b, &args, &min);
    assert_eq!(
        refs_of(&out.after),
        refs(&[&held[2], &held[3], &held[4], &x, &y]),
        "{}",
        out.run
    );

    // DEFAULT_DROP_RATE=0 drops nothing either.
    let c = agent(3);
    hold(&c);
    let out = attach_ok(
        &env,
        &c,
        &query,
        &[("MIN_MCP_TOOLS", "3"), ("DEFAULT_DROP_RATE", "0")],
    );
    assert_eq!(
        refs_of(&out.after),
        refs(&[&held[2], &held[3], &held[4], &x, &y])
    );

    // --no-auto-prune still obeys the limits: MAX_MCP_TOOLS=4 takes u3.
    let d = agent(4);
    hold(&d);
    let out = attach_ok(
        &env,
        &d,
        &args,
        &[("MIN_MCP_TOOLS", "3"), ("MAX_MCP_TOOLS", "4")],
    );
    assert_eq!(
        refs_of(&out.after),
        refs(&[&held[3], &held[4], &x, &y]),
        "{}",
        out.run
    );
    // (pre-attach pruning made the room before the arrivals)
    assert!(
        out.resp
            .details
            .detachments
            .iter()
            .any(|d| d.phase == "pre-attach"),
        "{}",
        out.run
    );
}

// --- 7. stale tools --------------------------------------------------------------------------

#[test]
fn tools_disabled_or_deleted_since_attaching_leave_in_processing() {
    let env = TestEnv::new();
    env.bundle("b");
    env.bundle("c");
    env.bundle("d");
    let alpha = make(&env, "b", "alpha", "aurora");
    let beta = make(&env, "b", "beta", "borealis");
    let gamma = make(&env, "c", "gamma", "galaxy");
    let eps = make(&env, "d", "epsilon", "eclipse");
    let keep = make(&env, "b", "steady", "solstice");
    let a = agent(1);
    let vars = [("MIN_MCP_TOOLS", "0")];
    let out = attach_ok(
        &env,
        &a,
        &[
            "--query",
            "aurora borealis galaxy eclipse solstice",
            "--min-score",
            "0",
        ],
        &vars,
    );
    assert_eq!(out.after.tools.len(), 5, "{}", out.run);
    let statuses0 = statuses(&env, &a);
    assert!(statuses0.values().all(|s| s == "ok"), "{statuses0:?}");

    env.run(&["tool", "disable", "b/alpha"]).success();
    env.run(&["bundle", "delete", "c"]).success();
    env.run(&["bundle", "disable", "d"]).success();
    let s = statuses(&env, &a);
    assert_eq!(s[&alpha.reference], "gone: disabled");
    assert_eq!(s[&gamma.reference], "gone: no longer in the catalog");
    assert_eq!(s[&eps.reference], "gone: its bundle is disabled");
    assert_eq!(s[&beta.reference], "ok");
    assert_eq!(s[&keep.reference], "ok");
    let human = env.run(&["agent", "show", &a]);
    human.success();
    assert!(human.stdout.contains("gone: disabled"), "{human}");

    // Protection does not keep what cannot be called; the next attach (any) removes them.
    let out = attach_ok(
        &env,
        &a,
        &["--keep", "b/alpha"],
        &[("MIN_MCP_TOOLS", "5"), ("NEVER_DETACH_TOOLS", "epsilon")],
    );
    assert_eq!(
        out.phases(),
        [&alpha, &gamma, &eps]
            .iter()
            .map(|t| (t.reference.clone(), "processing".to_owned()))
            .collect::<BTreeMap<_, _>>(),
        "{}",
        out.run
    );
    let w = &out.resp.details.warnings;
    assert_eq!(w.len(), 3, "{w:?}");
    assert!(
        w.contains(&format!("{} left the agent: disabled", alpha.reference)),
        "{w:?}"
    );
    assert!(
        w.contains(&format!(
            "{} left the agent: no longer in the catalog",
            gamma.reference
        )),
        "{w:?}"
    );
    assert!(
        w.contains(&format!(
            "{} left the agent: its bundle is disabled",
            eps.reference
        )),
        "{w:?}"
    );
    assert_eq!(refs_of(&out.after), refs(&[&beta, &keep]));
    assert!(statuses(&env, &a).values().all(|s| s == "ok"));
    // Enabled again, a tool does not come back by itself.
    env.run(&["tool", "enable", "b/alpha"]).success();
    let out = attach_ok(&env, &a, &[], &vars);
    assert_eq!(refs_of(&out.after), refs(&[&beta, &keep]));
}

#[test]
fn an_attached_tool_follows_its_slug_to_the_version_that_stands_for_it() {
    let env = TestEnv::new();
    env.bundle("b");
    let v1 = make_version(&env, "b", "delta", "v1", "dolphin");
    let beta1 = make_version(&env, "b", "beta", "v1", "bison");
    let a = agent(1);
    let vars = [("MIN_MCP_TOOLS", "0")];
    let out = attach_ok(
        &env,
        &a,
        &["--query", "dolphin bison", "--min-score", "0"],
        &vars,
    );
    assert_eq!(
        ids(&out.after),
        BTreeSet::from([v1.tool_id.clone(), beta1.tool_id.clone()])
    );
    let attached_at = out.after.tools[0].attached_at.clone();

    // A new version: show says where it went; the next attach follows it.
    let v2 = make_version(&env, "b", "delta", "v2", "dolphin");
    assert_eq!(
        statuses(&env, &a)[&v1.reference],
        format!("now {}", v2.reference)
    );
    let out = attach_ok(&env, &a, &[], &vars);
    assert!(out.resp.details.detached_tools.is_empty(), "{}", out.run);
    let t = out
        .after
        .tools
        .iter()
        .find(|t| t.reference.starts_with("b/delta@"))
        .unwrap();
    assert_eq!(
        (t.tool_id.as_str(), t.reference.as_str()),
        (v2.tool_id.as_str(), v2.reference.as_str())
    );
    assert_eq!(t.attached_at, attached_at, "attachedAt stays");
    assert_eq!(statuses(&env, &a)[&v2.reference], "ok");

    // The new version disabled: back to the one that stands for the slug now, v1.
    env.run(&["tool", "disable", &v2.reference]).success();
    assert_eq!(
        statuses(&env, &a)[&v2.reference],
        format!("now {}", v1.reference)
    );
    let out = attach_ok(&env, &a, &[], &vars);
    assert!(out.resp.details.detached_tools.is_empty(), "{}", out.run);
    assert!(ids(&out.after).contains(&v1.tool_id));

    // The attached version deleted for good, a newer one there: followed by its ref.
    let beta2 = make_version(&env, "b", "beta", "v2", "bison");
    env.run(&["tool", "delete", &beta1.reference]).success();
    assert_eq!(
        statuses(&env, &a)[&beta1.reference],
        format!("now {}", beta2.reference)
    );
    let out = attach_ok(&env, &a, &[], &vars);
    assert!(out.resp.details.detached_tools.is_empty(), "{}", out.run);
    assert!(ids(&out.after).contains(&beta2.tool_id));
    assert!(!ids(&out.after).contains(&beta1.tool_id));

    // A query matching the slug again keeps one entry, at the followed version.
    let out = attach_ok(&env, &a, &["--query", "dolphin"], &vars);
    assert_eq!(
        out.after
            .tools
            .iter()
            .filter(|t| t.reference.starts_with("b/delta@"))
            .count(),
        1
    );
}

/// An agent file holding v1 and v2 of one slug (a hand edit, or a merge): processing keeps one
/// entry, at the version that stands for the slug, and reports the other as detached. The
/// response must name the entry that left (v1), not the tool the agent still holds (v2).
#[test]
fn two_versions_of_one_slug_in_a_hand_edited_file_keep_one() {
    let env = TestEnv::new();
    env.bundle("b");
    let v1 = make_version(&env, "b", "delta", "v1", "dolphin");
    let v2 = make_version(&env, "b", "delta", "v2", "dolphin");
    let a = agent(1);
    write_agent(&env, &a, &[entry(&v1, &at(1)), entry(&v2, &at(2))]);
    let out = attach_ok(&env, &a, &[], &[("MIN_MCP_TOOLS", "0")]);
    assert_eq!(out.resp.details.detachments.len(), 1, "{}", out.run);
    let d = &out.resp.details.detachments[0];
    assert_eq!(d.phase, "processing");
    assert!(d.reason.contains("another version"), "{d:?}");
    assert_eq!(out.after.tools.len(), 1);
    assert_eq!(
        out.after.tools[0].tool_id, v2.tool_id,
        "the slug stands at v2"
    );
    // The entry that left is the superseded one: the response must not report as detached
    // the tool the agent still holds.
    assert_eq!(d.tool_id, v1.tool_id, "{}", out.run);
}

// --- 8. agent list / show / detach -----------------------------------------------------------

#[test]
fn agent_list_show_and_detach() {
    let env = TestEnv::fixture();
    let list: Vec<ListItem> = env.run(&["--json", "agent", "list"]).success().parse();
    assert!(list.is_empty());
    let human = env.run(&["agent", "list"]);
    human.success();
    assert!(human.stdout.contains("no agents yet"), "{human}");

    let (a, b) = (agent(2), agent(1));
    attach_ok(
        &env,
        &a,
        &["--query", "what time is it", "--min-score", "0"],
        &[],
    );
    attach_ok(
        &env,
        &b,
        &[
            "--query",
            "weather forecast github issues",
            "--min-score",
            "0",
        ],
        &[],
    );
    let list: Vec<ListItem> = env.run(&["--json", "agent", "list"]).success().parse();
    assert_eq!(
        list.iter().map(|l| l.agent_id.as_str()).collect::<Vec<_>>(),
        [b.as_str(), a.as_str()],
        "in agentID order"
    );
    for item in &list {
        let file = read_agent(&env, &item.agent_id).unwrap();
        let core = file.tools.iter().filter(|t| t.kind == "core").count();
        assert_eq!(
            (item.tools, item.external, item.core),
            (file.tools.len(), file.tools.len() - core, core)
        );
        assert_eq!(timestamp(&item.modified_at), timestamp(&file.modified_at));
    }
    assert!(
        list[1].core >= 1,
        "'what time is it' attaches the built-in now"
    );

    // show: the file's entries with a status, under any spelling of the ID.
    let file = read_agent(&env, &a).unwrap();
    for spelled in [a.clone(), bare(&a).to_uppercase()] {
        let doc = show(&env, &spelled);
        assert_eq!(doc.agent_id, a);
        assert_eq!(doc.created_at, file.created_at);
        assert_eq!(doc.modified_at, file.modified_at);
        let entries: Vec<AgentTool> = doc
            .tools
            .iter()
            .map(|t| {
                assert_eq!(t.status, "ok");
                AgentTool {
                    tool_id: t.tool_id.clone(),
                    reference: t.reference.clone(),
                    name: t.name.clone(),
                    kind: t.kind.clone(),
                    attached_at: t.attached_at.clone(),
                    match_score: t.match_score,
                }
            })
            .collect();
        assert_eq!(entries, file.tools);
    }

    // detach by each way of naming a tool; a tool named twice leaves once.
    let held = read_agent(&env, &b).unwrap();
    assert!(held.tools.len() >= 4, "{held:?}");
    let (t0, t1, t2) = (&held.tools[0], &held.tools[1], &held.tools[2]);
    let t0_bundle_slug = slug_key(&t0.reference).to_owned();
    let detach: DetachDoc = env
        .run(&[
            "--json",
            "agent",
            "detach",
            bare(&b),
            &t0_bundle_slug,
            &t0.tool_id,
            &t1.reference,
            &t2.name,
        ])
        .success()
        .parse();
    assert_eq!(detach.agent_id, b);
    assert_eq!(
        detach
            .detached
            .iter()
            .map(|d| (d.tool_id.as_str(), d.reference.as_str(), d.name.as_str()))
            .collect::<Vec<_>>(),
        [t0, t1, t2]
            .iter()
            .map(|t| (t.tool_id.as_str(), t.reference.as_str(), t.name.as_str()))
            .collect::<Vec<_>>()
    );
    let now = read_agent(&env, &b).unwrap();
    assert_eq!(detach.tools, now.tools.len());
    assert_eq!(now.tools, held.tools[3..].to_vec());
    assert!(timestamp(&now.modified_at) > timestamp(&held.modified_at));

    // Errors: unknown agent, tool not attached, bad ID, nothing named.
    let unknown = agent(9);
    let err = env.json_error(&["agent", "show", &unknown], 4);
    assert_eq!(err.error.code, "NOT_FOUND");
    let err = env.json_error(&["agent", "detach", &unknown, "--all"], 4);
    assert_eq!(err.error.code, "NOT_FOUND");
    assert!(!agent_path(&env, &unknown).exists());
    let bytes = std::fs::read(agent_path(&env, &b)).unwrap();
    let err = env.json_error(&["agent", "detach", &b, &t0.tool_id], 4);
    assert_eq!(err.error.code, "NOT_FOUND");
    let err = env.json_error(&["agent", "detach", &b, "weather/no-such"], 4);
    assert_eq!(err.error.code, "NOT_FOUND");
    // One unknown among known tools: nothing is detached.
    let err = env.json_error(&["agent", "detach", &b, &now.tools[0].tool_id, "nope"], 4);
    assert_eq!(err.error.code, "NOT_FOUND");
    assert_eq!(std::fs::read(agent_path(&env, &b)).unwrap(), bytes);
    let err = env.json_error(&["agent", "show", "agent-123"], 3);
    assert_eq!(err.error.code, "VALIDATION_ERROR");
    let err = env.json_error(&["agent", "detach", "nope", "--all"], 3);
    assert_eq!(err.error.code, "VALIDATION_ERROR");
    env.run(&["--json", "agent", "detach", &b]).failure(2);
    env.run(&["--json", "agent", "detach", &b, "x", "--all"])
        .failure(2);
    env.run(&["--json", "agent", "show"]).failure(2);
    assert_eq!(std::fs::read(agent_path(&env, &b)).unwrap(), bytes);

    // --all empties the agent; once more there is nothing to detach and nothing is written.
    let detach: DetachDoc = env
        .run(&["--json", "agent", "detach", &b, "--all"])
        .success()
        .parse();
    assert_eq!(detach.detached.len(), now.tools.len());
    assert_eq!(detach.tools, 0);
    assert!(read_agent(&env, &b).unwrap().tools.is_empty());
    let bytes = std::fs::read(agent_path(&env, &b)).unwrap();
    let detach: DetachDoc = env
        .run(&["--json", "agent", "detach", &b, "--all"])
        .success()
        .parse();
    assert!(detach.detached.is_empty());
    assert_eq!(std::fs::read(agent_path(&env, &b)).unwrap(), bytes);
    // The emptied agent is still listed.
    let list: Vec<ListItem> = env.run(&["--json", "agent", "list"]).success().parse();
    assert_eq!(list.len(), 2);
    assert_no_temp_files(&env);
}

#[test]
fn a_protected_tool_can_be_detached_by_hand() {
    let o = Orchard::new();
    let env = &o.env;
    let a = o.agent(1);
    // cfg-protected (toolctl.json), env-protected (environment), readfile (core).
    let mut cmd = env.command(&[
        "--json",
        "agent",
        "detach",
        &a,
        "cfg-protected",
        "south/env-protected",
        "readfile",
    ]);
    cmd.env("NEVER_DETACH_TOOLS", "env-protected");
    let run = Run::of(cmd, None);
    run.success();
    let doc: DetachDoc = run.parse();
    assert_eq!(
        doc.detached
            .iter()
            .map(|d| d.reference.clone())
            .collect::<BTreeSet<_>>(),
        refs(&[&o.cfg, &o.envp, &o.readfile])
    );
    assert_eq!(
        refs_of(&read_agent(env, &a).unwrap()),
        refs(&[&o.keep_me, &o.old_a, &o.old_b, &o.old_c])
    );
}

#[test]
fn agent_list_reports_unreadable_files_and_skips_temporary_ones() {
    let env = TestEnv::fixture();
    let a = agent(1);
    attach_ok(&env, &a, &["--query", "weather forecast"], &[]);
    let dir = env.catalog().join("agents");
    std::fs::write(dir.join(format!("{}.json", agent(2))), "{ broken").unwrap();
    std::fs::write(dir.join("agent-nope.json"), "{}").unwrap();
    std::fs::write(dir.join(".toolctl-tmp-abc123.json"), "{}").unwrap();
    std::fs::write(dir.join("README.md"), "notes").unwrap();
    let run = env.run(&["--json", "agent", "list"]);
    run.success();
    let list: Vec<ListItem> = run.parse();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].agent_id, a);
    let run = env.run(&["agent", "list"]);
    run.success();
    assert!(run.stderr.contains(&agent(2)), "{run}");
    assert!(run.stderr.contains("agent-nope.json"), "{run}");
    assert!(!run.stderr.contains(".toolctl-tmp-"), "{run}");
}

#[test]
fn tools_sharing_a_slug_are_told_apart_by_exported_name() {
    let env = TestEnv::new();
    env.bundle("one");
    env.bundle("two");
    let one = make(&env, "one", "dup", "walrus");
    let a = agent(1);
    let out = attach_ok(&env, &a, &["--query", "walrus"], &[]);
    assert_eq!(out.after.tools[0].name, "dup");
    // A second bundle with the slug renames the first tool's exported name: show says so and
    // the next attach records the new name.
    let two = make(&env, "two", "dup", "walrus");
    let status = &statuses(&env, &a)[&one.reference];
    assert!(
        status.starts_with("now named ") && status != "now named dup",
        "{status}"
    );
    let renamed = status.trim_start_matches("now named ").to_owned();
    let out = attach_ok(&env, &a, &[], &[]);
    assert_eq!(out.after.tools[0].name, renamed);
    assert_eq!(statuses(&env, &a)[&one.reference], "ok");
    let out = attach_ok(&env, &a, &["--query", "walrus"], &[]);
    let names: BTreeSet<String> = out.after.tools.iter().map(|t| t.name.clone()).collect();
    assert_eq!(names.len(), 2, "{}", out.run);
    assert!(
        names.iter().all(|n| n != "dup"),
        "bundle-prefixed names: {names:?}"
    );
    let one_name = out
        .after
        .tools
        .iter()
        .find(|t| t.tool_id == one.tool_id)
        .unwrap()
        .name
        .clone();

    // A protected exported name protects that tool only (the query matches another tool: a
    // query that matches nothing prunes nothing).
    let other = make(&env, "one", "other", "something else entirely");
    let out = attach_ok(
        &env,
        &a,
        &["--query", "something else entirely"],
        &[("MIN_MCP_TOOLS", "0"), ("NEVER_DETACH_TOOLS", &one_name)],
    );
    assert_eq!(
        ids(&out.after),
        BTreeSet::from([one.tool_id.clone(), other.tool_id.clone()]),
        "{}",
        out.run
    );
    assert_eq!(
        out.resp.details.detached_tools,
        std::slice::from_ref(&two.tool_id)
    );

    // `agent detach dup` is ambiguous once both are attached; bundle/slug is not.
    attach_ok(&env, &a, &["--query", "walrus"], &[]);
    let bytes = std::fs::read(agent_path(&env, &a)).unwrap();
    let err = env.json_error(&["agent", "detach", &a, "dup"], 3);
    assert_eq!(err.error.code, "VALIDATION_ERROR");
    assert_eq!(std::fs::read(agent_path(&env, &a)).unwrap(), bytes);
    let doc: DetachDoc = env
        .run(&["--json", "agent", "detach", &a, "two/dup"])
        .success()
        .parse();
    assert_eq!(doc.detached.len(), 1);
    assert_eq!(doc.detached[0].tool_id, two.tool_id);
    let doc: DetachDoc = env
        .run(&["--json", "agent", "detach", &a, &one_name])
        .success()
        .parse();
    assert_eq!(doc.detached[0].tool_id, one.tool_id);
    assert_eq!(doc.tools, 1, "other is left");
}

#[test]
fn a_blank_query_searches_nothing_and_a_missing_endpoint_fails_in_the_contract_shape() {
    let env = TestEnv::fixture();
    let a = agent(1);
    attach_ok(&env, &a, &["--query", "weather forecast"], &[]);
    let out = attach_ok(&env, &a, &["--query", "   "], &[("MIN_MCP_TOOLS", "0")]);
    assert_eq!(out.resp.details.scorer, None);
    assert!(
        out.resp.details.detached_tools.is_empty(),
        "a blank query detaches nothing"
    );
    let bytes = std::fs::read(agent_path(&env, &a)).unwrap();
    for scorer in ["embed", "hybrid"] {
        let run = attach_run(&env, &a, &["--query", "github", "--scorer", scorer], &[]);
        assert_ne!(run.status, Some(0), "{run}");
        assert_eq!(keys(&run.json()), ["success", "error", "code"], "{run}");
        let doc: AttachError = run.parse();
        assert!(!doc.success);
        assert!(doc.error.contains("endpoint"), "{doc:?}");
        assert_eq!(std::fs::read(agent_path(&env, &a)).unwrap(), bytes);
    }
}

#[test]
fn the_human_summary_says_what_arrived_and_what_left() {
    let (env, t, now) = limits_world();
    let a = agent(1);
    hold_all(&env, &a, &t, &now);
    let mut cmd = env.command(&["attach", &a, "--query", "alpha", "--no-auto-prune"]);
    cmd.env("MIN_MCP_TOOLS", "4");
    let run = Run::of(cmd, None);
    run.success();
    let text = &run.stdout;
    assert!(
        text.contains(&format!(
            "{a}: attached 0, 1 already attached, detached 2 (bm25 scores"
        )),
        "{run}"
    );
    assert!(text.contains("already attached"), "{run}");
    assert!(
        text.contains("detachment: not matched by the query"),
        "{run}"
    );
    assert!(
        text.contains(&format!(
            "{a} holds 5 tools (4 external, 1 built-in); limits: 30 in all, 20 external, at least 4 external"
        )),
        "{run}"
    );
    let run = env.run(&["attach", &a]);
    run.success();
    assert!(
        run.stdout.contains(&format!(
            "{a}: no --query, nothing searched or attached; detached 0"
        )),
        "{run}"
    );
}

// --- 9. concurrency --------------------------------------------------------------------------

const WORDS: [&str; 8] = [
    "aardvark", "bobcat", "caribou", "dingo", "ermine", "ferret", "gazelle", "hyena",
];

/// One tool per word of [`WORDS`].
fn zoo() -> (TestEnv, Vec<Made>) {
    let env = TestEnv::new();
    env.bundle("zoo");
    let tools = WORDS
        .iter()
        .map(|w| make(&env, "zoo", &format!("{w}-tool"), &format!("{w} {w}")))
        .collect();
    (env, tools)
}

/// Start `toolctl --json attach` for each (agent, query) at once; wait for all.
fn race(env: &TestEnv, runs: &[(String, String)], vars: &[(&str, &str)]) -> Vec<Run> {
    let children: Vec<_> = runs
        .iter()
        .map(|(a, q)| {
            let mut cmd = env.command(&["--json", "attach", a, "--query", q, "--min-score", "0"]);
            for (k, v) in vars {
                cmd.env(k, v);
            }
            cmd.stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    children
        .into_iter()
        .map(|c| Run::from_output("racing attach", c.wait_with_output().unwrap()))
        .collect()
}

#[test]
fn racing_attaches_on_one_agent_all_land() {
    let (env, tools) = zoo();
    // The index is built once before the race (see the cold-index test below).
    env.run(&["tool", "list"]).success();
    let a = agent(1);
    // MIN_MCP_TOOLS = MAX_MCP_TOOLS: no run may detach another's tools.
    let vars = [
        ("MIN_MCP_TOOLS", "50"),
        ("MAX_MCP_TOOLS", "50"),
        ("MAX_TOTAL_TOOLS", "60"),
    ];
    for round in 0..3 {
        if round > 0 {
            // Again on an existing agent.
            env.run(&["agent", "detach", &a, "--all"]).success();
        }
        let runs: Vec<(String, String)> =
            WORDS.iter().map(|w| (a.clone(), (*w).to_owned())).collect();
        for run in race(&env, &runs, &vars) {
            run.success();
            let resp: AttachResponse = run.parse();
            assert_eq!(resp.details.success_count, 1, "{run}");
            assert!(resp.details.detached_tools.is_empty(), "{run}");
        }
        let file = read_agent(&env, &a).unwrap();
        assert_eq!(
            ids(&file),
            tools
                .iter()
                .map(|t| t.tool_id.clone())
                .collect::<BTreeSet<_>>(),
            "round {round}: every racing run's tool is on the agent"
        );
        assert_no_temp_files(&env);
    }
}

#[test]
fn racing_attaches_on_a_fresh_catalog_all_succeed() {
    // No command has read the catalog since its tools were put, so the search index does not
    // exist yet: the racing attaches all build it at once. Three fresh catalogs, sixteen
    // processes each (two per word), make the race on the index's creation near certain.
    let vars = [
        ("MIN_MCP_TOOLS", "50"),
        ("MAX_MCP_TOOLS", "50"),
        ("MAX_TOTAL_TOOLS", "60"),
    ];
    let a = agent(1);
    let mut failed = Vec::new();
    for attempt in 0..3 {
        let (env, tools) = zoo();
        assert!(!env.catalog().join(".toolctl/index.sqlite").exists());
        let runs: Vec<(String, String)> = WORDS
            .iter()
            .chain(WORDS.iter())
            .map(|w| (a.clone(), (*w).to_owned()))
            .collect();
        let before = failed.len();
        failed.extend(
            race(&env, &runs, &vars)
                .into_iter()
                .filter(|r| r.status != Some(0))
                .map(|r| format!("catalog {attempt}: {}", r.stdout.replace('\n', " "))),
        );
        if failed.len() == before {
            assert_eq!(
                ids(&read_agent(&env, &a).unwrap()),
                tools
                    .iter()
                    .map(|t| t.tool_id.clone())
                    .collect::<BTreeSet<_>>()
            );
        }
    }
    assert!(
        failed.is_empty(),
        "{} of 48 racing attaches failed on fresh catalogs:\n{}",
        failed.len(),
        failed.join("\n")
    );
}

#[test]
fn racing_attaches_on_many_agents_each_land() {
    let (env, tools) = zoo();
    env.run(&["tool", "list"]).success();
    let runs: Vec<(String, String)> = WORDS
        .iter()
        .enumerate()
        .flat_map(|(i, w)| {
            [
                (agent(i as u32), (*w).to_owned()),
                (agent(100 + (i as u32 % 2)), (*w).to_owned()),
            ]
        })
        .collect();
    let vars = [("MIN_MCP_TOOLS", "20"), ("MAX_MCP_TOOLS", "20")];
    for run in race(&env, &runs, &vars) {
        run.success();
    }
    for (i, t) in tools.iter().enumerate() {
        assert_eq!(
            ids(&read_agent(&env, &agent(i as u32)).unwrap()),
            BTreeSet::from([t.tool_id.clone()])
        );
    }
    for parity in 0..2 {
        let want: BTreeSet<String> = tools
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 2 == parity)
            .map(|(_, t)| t.tool_id.clone())
            .collect();
        assert_eq!(
            ids(&read_agent(&env, &agent(100 + parity as u32)).unwrap()),
            want
        );
    }
    let list: Vec<ListItem> = env.run(&["--json", "agent", "list"]).success().parse();
    assert_eq!(list.len(), 10);
    assert_no_temp_files(&env);
}

#[test]
fn a_held_agent_lock_times_out_while_other_agents_go_on() {
    let (env, _) = zoo();
    let a = agent(1);
    attach_ok(&env, &a, &["--query", "aardvark"], &[]);
    let bytes = std::fs::read(agent_path(&env, &a)).unwrap();
    let lock_path = env
        .catalog()
        .join(".toolctl/locks")
        .join(format!("{a}.lock"));
    std::fs::create_dir_all(lock_path.parent().unwrap()).unwrap();
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(&lock_path)
        .unwrap();
    lock.lock().unwrap();
    let started = std::time::Instant::now();
    let doc = attach_fails(
        &env,
        &a,
        &["--query", "bobcat", "--lock-timeout", "300ms"],
        &[],
        8,
    );
    assert_eq!(doc.code, "LOCK_TIMEOUT");
    assert!(started.elapsed() < Duration::from_secs(20));
    let err = env.json_error(
        &["agent", "detach", &a, "--all", "--lock-timeout", "200ms"],
        8,
    );
    assert_eq!(err.error.code, "LOCK_TIMEOUT");
    assert_eq!(std::fs::read(agent_path(&env, &a)).unwrap(), bytes);
    // Another agent does not wait; nor does reading this one.
    attach_ok(
        &env,
        &agent(2),
        &["--query", "bobcat", "--lock-timeout", "300ms"],
        &[],
    );
    assert_eq!(show(&env, &a).tools.len(), 1);
    drop(lock);
    attach_ok(&env, &a, &["--query", "bobcat"], &[("MIN_MCP_TOOLS", "5")]);
    assert_eq!(read_agent(&env, &a).unwrap().tools.len(), 2);
}

// --- 10. the property test -------------------------------------------------------------------

/// Words of the random tools; `file`, `time`, `search` and `read` also match built-ins.
const VOCAB: [&str; 12] = [
    "amber", "basil", "cedar", "dune", "ember", "fjord", "grove", "harbor", "file", "time",
    "search", "read",
];

#[derive(Debug, Clone)]
struct Case {
    bundles: usize,
    /// (bundle, words) per tool.
    tools: Vec<(usize, Vec<usize>)>,
    min_ext: usize,
    max_ext: usize,
    max_total: usize,
    drop_rate: &'static str,
    exclude_core: bool,
    /// Tool indexes (modulo the number of tools) named in NEVER_DETACH_TOOLS.
    named: Vec<usize>,
    runs: Vec<Step>,
}

#[derive(Debug, Clone)]
struct Step {
    query: Option<Vec<usize>>,
    keep: Vec<usize>,
    no_auto_prune: bool,
    limit: u8,
    min_score: u8,
}

fn arb_case() -> impl proptest::strategy::Strategy<Value = Case> {
    use proptest::collection::vec;
    use proptest::prelude::*;
    let step = (
        proptest::option::weighted(0.8, vec(0..VOCAB.len(), 1..=3)),
        vec(0usize..15, 0..=2),
        any::<bool>(),
        prop_oneof![Just(25u8), 1u8..=25],
        prop_oneof![Just(0u8), Just(20), Just(35), Just(50), Just(80), Just(100)],
    )
        .prop_map(|(query, keep, no_auto_prune, limit, min_score)| Step {
            query,
            keep,
            no_auto_prune,
            limit,
            min_score,
        });
    (
        2usize..=3,
        vec((0usize..3, vec(0..VOCAB.len(), 1..=3)), 5..=15),
        (0usize..=5, 0usize..=5, 0usize..=6),
        prop_oneof![Just("0"), Just("0.3"), Just("0.6"), Just("1")],
        any::<bool>(),
        vec(0usize..15, 0..=2),
        vec(step, 2..=4),
    )
        .prop_map(
            |(
                bundles,
                tools,
                (min, more_ext, more_total),
                drop_rate,
                exclude_core,
                named,
                runs,
            )| {
                Case {
                    bundles,
                    tools,
                    min_ext: min,
                    max_ext: min + more_ext,
                    max_total: min + more_total,
                    drop_rate,
                    exclude_core,
                    named,
                    runs,
                }
            },
        )
}

fn check_case(case: &Case) {
    let env = TestEnv::new();
    let bundles: Vec<String> = (0..case.bundles).map(|b| format!("pb{b}")).collect();
    for b in &bundles {
        env.bundle(b);
    }
    let made: Vec<Made> = case
        .tools
        .iter()
        .enumerate()
        .map(|(i, (b, words))| {
            let text: Vec<&str> = words.iter().map(|w| VOCAB[*w]).collect();
            make(
                &env,
                &bundles[b % case.bundles],
                &format!("tool{i}"),
                &text.join(" "),
            )
        })
        .collect();
    let n = made.len();
    let by_id: BTreeMap<&str, &Made> = made.iter().map(|m| (m.tool_id.as_str(), m)).collect();
    let index_of: BTreeMap<&str, usize> = made
        .iter()
        .enumerate()
        .map(|(i, m)| (m.tool_id.as_str(), i))
        .collect();
    let named: BTreeSet<usize> = case.named.iter().map(|i| i % n).collect();
    let named_list = named
        .iter()
        .map(|i| made[*i].slug.to_uppercase())
        .collect::<Vec<_>>()
        .join(",");
    let (min_s, max_s, total_s) = (
        case.min_ext.to_string(),
        case.max_ext.to_string(),
        case.max_total.to_string(),
    );
    let exclude = if case.exclude_core { "true" } else { "false" };
    let vars = [
        ("MIN_MCP_TOOLS", min_s.as_str()),
        ("MAX_MCP_TOOLS", max_s.as_str()),
        ("MAX_TOTAL_TOOLS", total_s.as_str()),
        ("DEFAULT_DROP_RATE", case.drop_rate),
        ("EXCLUDE_LETTA_CORE_TOOLS", exclude),
        ("NEVER_DETACH_TOOLS", named_list.as_str()),
    ];
    let a = agent(7);
    for step in &case.runs {
        let query = step
            .query
            .as_ref()
            .map(|q| q.iter().map(|w| VOCAB[*w]).collect::<Vec<_>>().join(" "));
        let kept: BTreeSet<usize> = step.keep.iter().map(|i| i % n).collect();
        let limit = step.limit.to_string();
        let min_score = step.min_score.to_string();
        let mut args: Vec<&str> = vec!["--limit", &limit, "--min-score", &min_score];
        if let Some(q) = &query {
            args.extend(["--query", q.as_str()]);
        }
        for k in &kept {
            args.extend(["--keep", made[*k].reference.as_str()]);
        }
        if step.no_auto_prune {
            args.push("--no-auto-prune");
        }
        let out = attach_ok(&env, &a, &args, &vars);
        let run = &out.run;
        let before: &[AgentTool] = out.before.as_ref().map_or(&[], |b| &b.tools);
        let after = &out.after.tools;

        // Protected now: kept, named, matched now, and core tools while excluded.
        let attached = out.attached();
        let pinned = |t: &AgentTool| {
            index_of
                .get(t.tool_id.as_str())
                .is_some_and(|i| kept.contains(i) || named.contains(i))
        };
        let protected = |t: &AgentTool| {
            pinned(t) || attached.contains(&t.tool_id) || (t.kind == "core" && case.exclude_core)
        };

        // Kept and named tools never leave.
        for t in before.iter().filter(|t| pinned(t)) {
            assert!(
                ids(&out.after).contains(&t.tool_id),
                "protected {} was detached\n{run}",
                t.reference
            );
        }
        // preserved_tools: exactly the held tools pinned by --keep or by name.
        assert_eq!(
            out.resp
                .details
                .preserved_tools
                .iter()
                .cloned()
                .collect::<BTreeSet<_>>(),
            before
                .iter()
                .filter(|t| pinned(t))
                .map(|t| t.tool_id.clone())
                .collect::<BTreeSet<_>>(),
            "{run}"
        );

        // The limits hold, unless protection or the MIN_MCP_TOOLS floor keeps the agent over.
        let total = after.len();
        let ext = after.iter().filter(|t| t.kind == "external").count();
        let free_ext = after
            .iter()
            .filter(|t| t.kind == "external" && !protected(t))
            .count();
        let free_core = after
            .iter()
            .filter(|t| t.kind == "core" && !protected(t))
            .count();
        if ext > case.max_ext {
            assert_eq!(
                free_ext, 0,
                "over MAX_MCP_TOOLS with unprotected external tools\n{run}"
            );
        }
        if total > case.max_total {
            assert!(
                free_ext == 0 || ext <= case.min_ext,
                "over MAX_TOTAL_TOOLS with unprotected external tools above the floor\n{run}"
            );
            assert!(
                case.exclude_core || free_core == 0,
                "over MAX_TOTAL_TOOLS with unprotected core tools\n{run}"
            );
        }
        let warns = &out.resp.details.warnings;
        assert_eq!(
            warns.iter().any(|w| w.contains("MAX_TOTAL_TOOLS=")),
            total > case.max_total,
            "a warning iff over MAX_TOTAL_TOOLS\n{run}"
        );
        assert_eq!(
            warns.iter().any(|w| w.contains("MAX_MCP_TOOLS=")),
            ext > case.max_ext,
            "a warning iff over MAX_MCP_TOOLS\n{run}"
        );

        if query.is_some() {
            // Detachment: the held unprotected external tools left down to the floor.
            let held_ext: Vec<&AgentTool> =
                before.iter().filter(|t| t.kind == "external").collect();
            let held_protected = held_ext.iter().filter(|t| protected(t)).count();
            let stayed_free = held_ext
                .iter()
                .filter(|t| !protected(t) && ids(&out.after).contains(&t.tool_id))
                .count();
            let room = held_ext
                .len()
                .min(case.min_ext)
                .saturating_sub(held_protected);
            assert!(
                stayed_free <= room,
                "{stayed_free} unmatched unprotected tools stayed, the floor keeps {room}\n{run}"
            );
        } else {
            // Without a query the limits alone act, exactly as plan.rs says: the oldest
            // unprotected external tools (then the key) leave, no further than the floor.
            let ext0 = before.iter().filter(|t| t.kind == "external").count();
            let total0 = before.len();
            let mut free: Vec<&AgentTool> = before
                .iter()
                .filter(|t| t.kind == "external" && !protected(t))
                .collect();
            free.sort_by_key(|t| {
                let m = by_id[t.tool_id.as_str()];
                (
                    timestamp(&t.attached_at),
                    m.bundle_id.clone(),
                    m.slug.clone(),
                )
            });
            let excess = total0
                .saturating_sub(case.max_total)
                .max(ext0.saturating_sub(case.max_ext));
            let count = excess
                .min(ext0.saturating_sub(case.min_ext))
                .min(free.len());
            let want: Vec<String> = free[..count].iter().map(|t| t.tool_id.clone()).collect();
            let got: Vec<String> = out
                .resp
                .details
                .detachments
                .iter()
                .filter(|d| d.reference.starts_with("pb"))
                .map(|d| d.tool_id.clone())
                .collect();
            assert_eq!(got, want, "the limits' detachments\n{run}");
            let core_left = out
                .resp
                .details
                .detachments
                .iter()
                .filter(|d| d.reference.starts_with("builtin/"))
                .count();
            let free_core0 = before
                .iter()
                .filter(|t| t.kind == "core" && !protected(t))
                .count();
            let want_core = if case.exclude_core {
                0
            } else {
                (total0 - count)
                    .saturating_sub(case.max_total)
                    .min(free_core0)
            };
            assert_eq!(
                core_left, want_core,
                "core tools detached for MAX_TOTAL_TOOLS\n{run}"
            );
        }

        // Every tool on the agent exists and can be called.
        let usable: BTreeMap<String, bool> = env
            .tool_list(&["--page-size", "1000"])
            .items
            .into_iter()
            .map(|t| (t.tool_id, t.is_enabled && t.bundle_enabled && t.available))
            .collect();
        for t in after {
            assert_eq!(
                usable.get(&t.tool_id),
                Some(&true),
                "{t:?} is not a usable tool"
            );
        }
        // And the agent file agrees with `agent show` and `agent list`.
        let shown = show(&env, &a);
        assert_eq!(shown.tools.len(), after.len());
        assert!(shown.tools.iter().all(|t| t.status == "ok"));
    }
}

#[test]
fn attach_keeps_its_rules_over_random_catalogs_and_runs() {
    use proptest::prelude::*;
    let config = ProptestConfig {
        cases: 12,
        failure_persistence: None,
        max_shrink_iters: 24,
        ..ProptestConfig::default()
    };
    proptest!(config, |(case in arb_case())| {
        check_case(&case);
    });
}

// --- the scorer ------------------------------------------------------------------------------

/// With an embeddings endpoint set, attach scores with `hybrid` (keywords and embeddings) and
/// says so; `--scorer` overrides the choice; without an endpoint it is `bm25` (the other
/// tests).
#[tokio::test(flavor = "multi_thread")]
async fn attach_uses_hybrid_when_an_embeddings_endpoint_is_set() {
    use crate::test_pick::{embeddings_server, set_endpoint, v1};
    let server = embeddings_server().await;
    let env = TestEnv::fixture();
    set_endpoint(
        &env,
        "embed",
        json!({ "baseUrl": v1(&server), "model": "bag-of-words" }),
    );
    let a = agent(1);
    let doc = env.json(&["attach", &a, "--query", "weather forecast"]);
    assert_eq!(doc["details"]["scorer"], "hybrid", "{doc}");
    let requests = server.received_requests().await.unwrap().len();
    assert!(requests > 0, "the embeddings endpoint was not asked");
    let best = &doc["details"]["successful_attachments"][0];
    assert_eq!(best["match_score"], 100.0, "{doc}");

    let doc = env.json(&[
        "attach",
        &a,
        "--query",
        "weather forecast",
        "--scorer",
        "bm25",
    ]);
    assert_eq!(doc["details"]["scorer"], "bm25", "{doc}");
    assert_eq!(
        server.received_requests().await.unwrap().len(),
        requests,
        "bm25 asked the embeddings endpoint"
    );
}

/// Scores are absolute: a request that matches nothing well attaches nothing and detaches
/// nothing, however the catalog's best match would compare with the others (the issue's
/// case: "number" is in every tool, so it weighs nothing; the other words are in none).
#[test]
fn a_request_that_matches_nothing_well_attaches_and_detaches_nothing() {
    let env = TestEnv::new();
    env.bundle("helpers");
    env.bundle("travel");
    let tools: Vec<Made> = (1..=20)
        .map(|n| {
            make(
                &env,
                "helpers",
                &format!("helper-{n}"),
                &format!("Unrelated helper number {n} for internal bookkeeping"),
            )
        })
        .collect();
    let a = agent(1);
    let held: Vec<Value> = tools[..10]
        .iter()
        .enumerate()
        .map(|(i, t)| entry(t, &at(i as u32 + 1)))
        .collect();
    write_agent(&env, &a, &held);
    let before = read_agent(&env, &a).unwrap();
    let out = attach_ok(
        &env,
        &a,
        &["--query", "book me a number of flights to Paris"],
        &[],
    );
    let d = &out.resp.details;
    assert_eq!(d.passed_filter_count, 0, "{}", out.run);
    assert!(d.successful_attachments.is_empty(), "{}", out.run);
    assert!(d.detached_tools.is_empty(), "{}", out.run);
    assert_eq!(ids(&out.after), ids(&before), "{}", out.run);
    // The same words do match a tool that is about them, at the same minimum.
    make(
        &env,
        "travel",
        "book-flight",
        "Book flights to a city, Paris or elsewhere",
    );
    let out = attach_ok(
        &env,
        &agent(2),
        &["--query", "book me a number of flights to Paris"],
        &[],
    );
    let names: Vec<&str> = out
        .resp
        .details
        .successful_attachments
        .iter()
        .map(|a| a.name.as_str())
        .collect();
    assert_eq!(names, ["book-flight"], "{}", out.run);
}
