//! `toolctl attach` and `toolctl agent list|show|detach` (the Tool Selector API's attach
//! contract): the real binary on temporary catalogs, and (`letta`, `letta_api`) a real Letta
//! server and a stand-in of its newer API.
//!
//! - **The contract's response**: the contract's example request over the fixture catalog, the
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
//!
//! Over 1,000 lines on purpose: the attach contract and agents, whose cases share one fixture
//! catalog; test files are split by topic past ~1,500 lines.

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

/// `agent list --json`: `{items}`, never a bare array (docs/JSON.md rule 2).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct AgentList {
    items: Vec<ListItem>,
    problems: Vec<ListProblem>,
}

/// An agent file `agent list` could not read.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct ListProblem {
    path: String,
    message: String,
}

/// `agent detach --json`: the agent as `agent show` prints it, and the tools that left it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct DetachDoc {
    #[serde(rename = "agentID")]
    agent_id: String,
    created_at: String,
    modified_at: String,
    tools: Vec<ShowTool>,
    detached: Vec<DetachedItem>,
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
        scorer: "fused".to_owned(),
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
    // On files a detachment cannot fail; an attachment fails only for a limit the tools
    // protected now fill.
    assert!(d.failed_detachments.is_empty(), "{run}");
    for f in &d.failed_attachments {
        assert_eq!(f["success"], false, "{run}");
        assert!(
            f["error"]
                .as_str()
                .is_some_and(|e| e.starts_with("over MAX_MCP_TOOLS=")
                    || e.starts_with("over MAX_TOTAL_TOOLS=")),
            "{f}\n{run}"
        );
    }
    assert_eq!(d.failure_count, d.failed_attachments.len(), "{run}");
    assert_eq!(d.success_count, d.successful_attachments.len(), "{run}");
    assert_eq!(
        d.success_count + d.failure_count,
        d.passed_filter_count,
        "{run}"
    );
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

// --- 1. the contract's example ---------------------------------------------------------------

// --- 2. agents as files ----------------------------------------------------------------------

// --- 3. validation ---------------------------------------------------------------------------

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

/// The match score `tool` attached with, if it was attached.
fn score_of(out: &Outcome, tool: &Made) -> Option<f64> {
    out.resp
        .details
        .successful_attachments
        .iter()
        .find(|a| a.tool_id == tool.tool_id)
        .map(|a| a.match_score)
}

fn refs(tools: &[&Made]) -> BTreeSet<String> {
    tools.iter().map(|t| t.reference.clone()).collect()
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

// --- 6. post-attach pruning ------------------------------------------------------------------

// --- 7. stale tools --------------------------------------------------------------------------

// --- 8. agent list / show / detach -----------------------------------------------------------

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

        if query.is_some() && out.resp.details.passed_filter_count > 0 {
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
            // Without a query, or with one that passed nothing (attach then prunes nothing for
            // relevance), the limits alone act, exactly as plan.rs says: the oldest
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
            if query.is_some() {
                // A query that passed nothing still orders the limits' detachments by its
                // (sub-threshold) relevance first: only how many leave is the limits' alone.
                assert_eq!(got.len(), want.len(), "the limits' detachments\n{run}");
            } else {
                assert_eq!(got, want, "the limits' detachments\n{run}");
            }
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
/// says so; `--scorer` overrides the choice; without an endpoint it is `fused` (the other
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
    // Absolute, not normalised per request: the best match is not rescaled to 100.
    let best = doc["details"]["successful_attachments"][0]["match_score"]
        .as_f64()
        .unwrap();
    assert!((35.0..100.0).contains(&best), "{doc}");

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

mod agent_commands;
mod detach_and_limits;
mod helpers;
mod letta;
mod letta_api;
mod prune_and_stale;
mod seed_and_files;
mod siblings;
mod validation;

/// Scores are absolute: a request that matches nothing well attaches nothing and detaches
/// nothing, however the catalog's best match would compare with the others (the issue's
/// case: "number" is in every tool, so it weighs nothing; the other words are in none).
#[test]
fn a_request_that_matches_nothing_well_attaches_and_detaches_nothing() {
    let env = TestEnv::new();
    matches_nothing_well(&env, &[]);
}

/// The same with `hybrid`, which ranks by scores normalised per request (its best is always
/// 1): what passes `min_score` is its absolute score, so the best of 20 unrelated helpers
/// still passes nothing.
#[tokio::test(flavor = "multi_thread")]
async fn with_hybrid_a_request_that_matches_nothing_well_attaches_and_detaches_nothing() {
    use crate::test_pick::{embeddings_server, set_endpoint, v1};
    let server = embeddings_server().await;
    let env = TestEnv::new();
    set_endpoint(
        &env,
        "embed",
        json!({ "baseUrl": v1(&server), "model": "bag-of-words" }),
    );
    matches_nothing_well(&env, &["--scorer", "hybrid"]);
    assert!(
        !server.received_requests().await.unwrap().is_empty(),
        "hybrid did not ask the embeddings endpoint"
    );
}

/// A request of stop words alone ("the", "do it for me") says nothing of what it wants: it
/// matches no tool, so it attaches nothing and detaches nothing, with each local scorer
/// (before, "the" took the name-like path, where every tool holding "the" scored 50).
#[test]
fn a_request_of_stop_words_attaches_and_detaches_nothing() {
    let env = TestEnv::new();
    let (a, before) = agent_holding_helpers(&env, 12, 8, |n| {
        format!("Keep the ledger number {n} up to date for the team")
    });
    for scorer in ["fused", "bm25", "keyword"] {
        for query in ["the", "do it for me", "the 2"] {
            let out = attach_ok(&env, &a, &["--query", query, "--scorer", scorer], &[]);
            let d = &out.resp.details;
            assert_eq!(d.passed_filter_count, 0, "{scorer} {query}: {}", out.run);
            assert!(d.successful_attachments.is_empty(), "{}", out.run);
            assert!(d.detached_tools.is_empty(), "{}", out.run);
            assert_eq!(ids(&out.after), ids(&before), "{}", out.run);
        }
    }
    // A word that says what it wants still attaches the tools about it.
    let out = attach_ok(&env, &agent(2), &["--query", "the ledger"], &[]);
    assert!(
        !out.resp.details.successful_attachments.is_empty(),
        "{}",
        out.run
    );
}

/// Unlike `pick`, attach considers unsafe tools (the README says so): an enabled
/// `builtin/exec` is attached for a request to run a command, which `pick` keeps out unless
/// `--allow-unsafe`.
#[test]
fn attach_considers_unsafe_tools_that_pick_keeps_out() {
    let env = TestEnv::new();
    env.run(&["tool", "enable", "builtin/exec"]).success();
    let task = "run a shell command";
    let out = attach_ok(&env, &agent(1), &["--query", task], &[]);
    let names: Vec<&str> = out
        .resp
        .details
        .successful_attachments
        .iter()
        .map(|a| a.name.as_str())
        .collect();
    assert!(names.contains(&"exec"), "{}", out.run);
    let picked = |extra: &[&str]| {
        let mut args = vec!["pick", task, "--json"];
        args.extend_from_slice(extra);
        let run = env.run(&args);
        run.success();
        let doc: Value = serde_json::from_str(&run.stdout).unwrap();
        doc["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|item| item["ref"] == "builtin/exec@v1")
    };
    assert!(!picked(&[]), "pick showed an unsafe tool");
    assert!(picked(&["--allow-unsafe"]));
}

/// `count` tools `helpers/helper-N` described by `words(N)`, and agent 1 holding the first
/// `held`: the agent, and its file as written.
fn agent_holding_helpers(
    env: &TestEnv,
    count: u32,
    held: usize,
    words: impl Fn(u32) -> String,
) -> (String, AgentDoc) {
    env.bundle("helpers");
    let tools: Vec<Made> = (1..=count)
        .map(|n| make(env, "helpers", &format!("helper-{n}"), &words(n)))
        .collect();
    let a = agent(1);
    let entries: Vec<Value> = tools[..held]
        .iter()
        .enumerate()
        .map(|(i, t)| entry(t, &at(i as u32 + 1)))
        .collect();
    write_agent(env, &a, &entries);
    let before = read_agent(env, &a).unwrap();
    (a, before)
}

/// 20 helpers "Unrelated helper number N for internal bookkeeping", 10 of them held, and
/// "book me a number of flights to Paris" (with `scorer`): nothing passes, nothing leaves;
/// then a tool about flights to Paris passes at the same minimum.
fn matches_nothing_well(env: &TestEnv, scorer: &[&str]) {
    env.bundle("travel");
    let (a, before) = agent_holding_helpers(env, 20, 10, |n| {
        format!("Unrelated helper number {n} for internal bookkeeping")
    });
    let query = ["--query", "book me a number of flights to Paris"];
    let args: Vec<&str> = query.iter().chain(scorer).copied().collect();
    let out = attach_ok(env, &a, &args, &[]);
    let d = &out.resp.details;
    assert!(
        d.processed_count > 0,
        "the helpers were scored: {}",
        out.run
    );
    assert_eq!(d.passed_filter_count, 0, "{}", out.run);
    assert!(d.successful_attachments.is_empty(), "{}", out.run);
    assert!(d.detached_tools.is_empty(), "{}", out.run);
    assert_eq!(ids(&out.after), ids(&before), "{}", out.run);
    // The same words do match a tool that is about them, at the same minimum.
    make(
        env,
        "travel",
        "book-flight",
        "Book flights to a city, Paris or elsewhere",
    );
    let out = attach_ok(env, &agent(2), &args, &[]);
    let names: Vec<&str> = out
        .resp
        .details
        .successful_attachments
        .iter()
        .map(|a| a.name.as_str())
        .collect();
    assert_eq!(names, ["book-flight"], "{}", out.run);
}
