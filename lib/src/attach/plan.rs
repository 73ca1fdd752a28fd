//! The attach contract's phases 3–6 as a pure function: given the tools an agent holds, the
//! tools the search passed and the limits, which tools leave and which arrive.
//!
//! Nothing here reads files or scores tools, so every rule is tested in-process and by a
//! property test over random agents, limits and matches (`tests.rs`). The rules, in the order
//! they run (docs/attach.md says the same for users):
//!
//! - **Protected** tools never leave: names listed in `protectedTools`/`NEVER_DETACH_TOOLS`/
//!   `PROTECTED_TOOLS`, `--keep` tools, the tools this request matched, and built-in (core)
//!   tools while `excludeCoreTools` is on (the default).
//! - **Only external tools are pruned**, least relevant to the query first (ties: the one
//!   attached longest ago, then the key), and a detachment never leaves fewer than
//!   `MIN_MCP_TOOLS` external tools on the agent at that moment.
//! - **Pre-attach pruning** (with a query): when the tools to attach would take the agent past
//!   `MAX_TOTAL_TOOLS` or `MAX_MCP_TOOLS`, detach as many as the excess first.
//! - **Detachment** (with a query): detach every unprotected external tool the query did not
//!   match — the agent's tool set follows its task — down to `MIN_MCP_TOOLS`.
//! - **Attachment**: the matched tools the agent lacks arrive, best match first, while the
//!   protected tools (those arriving among them) leave room under `MAX_TOTAL_TOOLS` and
//!   `MAX_MCP_TOOLS`: the tools attached in the request count toward the limits, and the
//!   others are refused, each with the limit that refused it.
//! - **Post-attach pruning** (with a query and auto-prune): keep
//!   `max(min(⌊n_external × (1 − drop_rate)⌋, MAX_MCP_TOOLS, MAX_TOTAL_TOOLS − n_core),
//!   MIN_MCP_TOOLS)` external tools: the protected ones first, the most relevant others in the
//!   places left; detach the rest.
//! - **Limits**, always, query or not: while the agent is over a limit, detach the least
//!   relevant unprotected external tool (not below `MIN_MCP_TOOLS`); with `excludeCoreTools`
//!   off, then unprotected core tools for `MAX_TOTAL_TOOLS`. What protection keeps over a
//!   limit stays, with a warning.
//!
//! Where the reference implementation caps must-keep tools at `⌊0.8 × n_external⌋` when they
//! alone reach the target, this planner keeps them all: the cap would detach protected tools,
//! which the contract forbids in every phase ("Protected tools are never removed in either
//! phase"). The warning says when that leaves the agent over a limit.

use serde::Serialize;
use std::collections::HashSet;
use std::hash::Hash;

/// The attach contract's two kinds of tools: built-in ("core") and everything else ("MCP",
/// external).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Core,
    External,
}

/// An agent's limits and how core tools are treated, already checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    /// `MAX_TOTAL_TOOLS`
    pub max_total: usize,
    /// `MAX_MCP_TOOLS`
    pub max_external: usize,
    /// `MIN_MCP_TOOLS`
    pub min_external: usize,
    /// `DEFAULT_DROP_RATE`, in 0..=1.
    pub drop_rate: f64,
    /// `EXCLUDE_LETTA_CORE_TOOLS`: core tools are outside attach's management (protected).
    pub exclude_core: bool,
}

/// A tool the agent holds, as the planner sees it.
#[derive(Debug, Clone)]
pub struct Held<K> {
    pub key: K,
    pub kind: Kind,
    /// Protected by name (configuration) or by `--keep`.
    pub pinned: bool,
    /// Relevance to the query, 0..=1 (0 without a query).
    pub relevance: f64,
    /// When it was attached (any monotonic unit): the older of two equally relevant tools
    /// leaves first.
    pub attached_at: i64,
}

/// A tool the search passed (its score reached `min_score`).
#[derive(Debug, Clone)]
pub struct Matched<K> {
    pub key: K,
    pub kind: Kind,
    pub score: f64,
}

/// What the planner is asked.
#[derive(Debug, Clone)]
pub struct Input<K> {
    pub held: Vec<Held<K>>,
    /// Best match first.
    pub matched: Vec<Matched<K>>,
    /// Whether the request had a query: without one nothing is ranked, so only the limits
    /// are enforced.
    pub has_query: bool,
    pub auto_prune: bool,
    pub limits: Limits,
}

/// The phase that detached a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    /// Not decided here: a tool that can no longer be called leaves before the planner runs.
    Processing,
    PreAttach,
    Detachment,
    PostAttach,
    Limits,
}

impl Phase {
    /// Why a tool detached in this phase left, for people.
    pub fn reason(self) -> &'static str {
        match self {
            Self::Processing => "processing: no longer usable",
            Self::PreAttach => "pre-attach pruning: made room for the matched tools",
            Self::Detachment => "detachment: not matched by the query",
            Self::PostAttach => "post-attach pruning: less relevant than the tools kept",
            Self::Limits => "over a limit: the least relevant unprotected tool",
        }
    }
}

/// What the planner decided.
#[derive(Debug, Clone)]
pub struct Plan<K> {
    /// In the order they were decided.
    pub detached: Vec<(K, Phase)>,
    /// Matched tools the agent did not hold, best match first.
    pub attached: Vec<K>,
    /// Matched tools that did not fit under a limit, best match first, with the limit's
    /// words (`MAX_MCP_TOOLS=5`).
    pub refused: Vec<(K, String)>,
    /// The agent's tools at the end: the held ones that stayed (in their order), then the
    /// attached ones.
    pub kept: Vec<K>,
    pub warnings: Vec<OverLimit>,
}

/// A limit the agent stays over, and what keeps it there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OverLimit {
    /// `MAX_MCP_TOOLS` (the external tools), else `MAX_TOTAL_TOOLS` (all of them).
    pub external: bool,
    /// The tools the agent keeps (of the limit's kind).
    pub count: usize,
    pub max: usize,
    /// Of them, protected (the request's keep list, protected names, matched now, built-in).
    pub protected: usize,
    /// Built-in tools count as protected (`EXCLUDE_CORE`).
    pub exclude_core: bool,
    /// External tools `MIN_MCP_TOOLS` keeps besides.
    pub free_external: usize,
    pub min_external: usize,
}

impl OverLimit {
    /// The warning, naming the request's keep list `keep` (the caller's word for it: the
    /// command line says `--keep`).
    pub fn describe(&self, keep: &str) -> String {
        let (what, limit) = if self.external {
            ("external tools", "MAX_MCP_TOOLS")
        } else {
            ("tools", "MAX_TOTAL_TOOLS")
        };
        let mut why = format!(
            "{} of them are protected ({keep}, protected names, matched now{})",
            self.protected,
            if self.exclude_core {
                ", built-in tools"
            } else {
                ""
            }
        );
        if self.free_external > 0 {
            why.push_str(&format!(
                " and MIN_MCP_TOOLS={} keeps {} more",
                self.min_external, self.free_external
            ));
        }
        format!(
            "the agent keeps {} {what}, more than {limit}={}: {why}",
            self.count, self.max
        )
    }
}

impl std::fmt::Display for OverLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe("kept by the request"))
    }
}

#[derive(Debug, Clone)]
struct Slot<K> {
    key: K,
    kind: Kind,
    protected: bool,
    relevance: f64,
    attached_at: i64,
    on: bool,
}

/// Run phases 3–6 and the limits on `input`.
pub fn plan<K: Clone + Eq + Hash + Ord>(input: &Input<K>) -> Plan<K> {
    let limits = &input.limits;
    let matched: HashSet<&K> = input.matched.iter().map(|m| &m.key).collect();
    let mut slots: Vec<Slot<K>> = input
        .held
        .iter()
        .map(|h| Slot {
            key: h.key.clone(),
            kind: h.kind,
            protected: h.pinned
                || matched.contains(&h.key)
                || (h.kind == Kind::Core && limits.exclude_core),
            relevance: h.relevance,
            attached_at: h.attached_at,
            on: true,
        })
        .collect();
    let held: HashSet<&K> = input.held.iter().map(|h| &h.key).collect();
    let mut seen = HashSet::new();
    let arriving: Vec<&Matched<K>> = input
        .matched
        .iter()
        .filter(|m| !held.contains(&m.key) && seen.insert(&m.key))
        .collect();
    let mut plan = Plan {
        detached: Vec::new(),
        attached: Vec::new(),
        refused: Vec::new(),
        kept: Vec::new(),
        warnings: Vec::new(),
    };

    if input.has_query {
        // Phase 3: make room for what is about to arrive.
        let (total, external) = counts(&slots);
        let new_external = arriving.iter().filter(|m| m.kind == Kind::External).count();
        let excess = (total + arriving.len())
            .saturating_sub(limits.max_total)
            .max((external + new_external).saturating_sub(limits.max_external));
        detach_external(&mut slots, excess, limits, Phase::PreAttach, &mut plan);
        // Phase 4: what the query did not match leaves.
        detach_external(&mut slots, usize::MAX, limits, Phase::Detachment, &mut plan);
    }

    // Phase 5: best first, while they fit. What arrives is protected, so it fits while the
    // protected tools do not fill the limit (the others make room in phase 6 and the limits).
    let on_protected = slots.iter().filter(|s| s.on && s.protected);
    let mut total = on_protected.clone().count();
    let mut external = on_protected.filter(|s| s.kind == Kind::External).count();
    for m in arriving {
        if total >= limits.max_total {
            plan.refused.push((
                m.key.clone(),
                format!("MAX_TOTAL_TOOLS={}", limits.max_total),
            ));
            continue;
        }
        if m.kind == Kind::External && external >= limits.max_external {
            plan.refused.push((
                m.key.clone(),
                format!("MAX_MCP_TOOLS={}", limits.max_external),
            ));
            continue;
        }
        total += 1;
        if m.kind == Kind::External {
            external += 1;
        }
        slots.push(Slot {
            key: m.key.clone(),
            kind: m.kind,
            protected: true,
            relevance: m.score,
            attached_at: i64::MAX,
            on: true,
        });
        plan.attached.push(m.key.clone());
    }

    if input.has_query && input.auto_prune {
        // Phase 6.
        let (total, external) = counts(&slots);
        let core = total - external;
        let by_drop_rate = (external as f64 * (1.0 - limits.drop_rate)).floor() as usize;
        let target = by_drop_rate
            .min(limits.max_external)
            .min(limits.max_total.saturating_sub(core))
            .max(limits.min_external);
        let protected = slots
            .iter()
            .filter(|s| s.on && s.kind == Kind::External && s.protected)
            .count();
        let excess = external.saturating_sub(target.max(protected));
        detach_external(&mut slots, excess, limits, Phase::PostAttach, &mut plan);
    }

    // The limits hold whatever was asked.
    let (total, external) = counts(&slots);
    let excess = total
        .saturating_sub(limits.max_total)
        .max(external.saturating_sub(limits.max_external));
    detach_external(&mut slots, excess, limits, Phase::Limits, &mut plan);
    if !limits.exclude_core {
        let (total, _) = counts(&slots);
        let excess = total.saturating_sub(limits.max_total);
        detach(&mut slots, excess, Kind::Core, Phase::Limits, &mut plan);
    }
    plan.warnings = over_limit_warnings(&slots, limits);
    plan.kept = slots.into_iter().filter(|s| s.on).map(|s| s.key).collect();
    plan
}

/// Tools on the agent: all, and external.
fn counts<K>(slots: &[Slot<K>]) -> (usize, usize) {
    let on = slots.iter().filter(|s| s.on);
    let total = on.clone().count();
    let external = on.filter(|s| s.kind == Kind::External).count();
    (total, external)
}

/// Detach up to `count` unprotected external tools, least relevant first, never leaving fewer
/// than `MIN_MCP_TOOLS` external tools.
fn detach_external<K: Clone + Ord>(
    slots: &mut [Slot<K>],
    count: usize,
    limits: &Limits,
    phase: Phase,
    plan: &mut Plan<K>,
) {
    let (_, external) = counts(slots);
    let count = count.min(external.saturating_sub(limits.min_external));
    detach(slots, count, Kind::External, phase, plan);
}

/// Detach up to `count` unprotected tools of `kind`, least relevant first (ties: attached
/// longest ago, then the key).
fn detach<K: Clone + Ord>(
    slots: &mut [Slot<K>],
    count: usize,
    kind: Kind,
    phase: Phase,
    plan: &mut Plan<K>,
) {
    if count == 0 {
        return;
    }
    let mut candidates: Vec<usize> = (0..slots.len())
        .filter(|&i| slots[i].on && slots[i].kind == kind && !slots[i].protected)
        .collect();
    candidates.sort_by(|&a, &b| {
        let (a, b) = (&slots[a], &slots[b]);
        a.relevance
            .total_cmp(&b.relevance)
            .then(a.attached_at.cmp(&b.attached_at))
            .then_with(|| a.key.cmp(&b.key))
    });
    for i in candidates.into_iter().take(count) {
        slots[i].on = false;
        plan.detached.push((slots[i].key.clone(), phase));
    }
}

/// A warning for each limit the agent stays over, saying what keeps it there.
fn over_limit_warnings<K>(slots: &[Slot<K>], limits: &Limits) -> Vec<OverLimit> {
    let on: Vec<&Slot<K>> = slots.iter().filter(|s| s.on).collect();
    let external: Vec<&Slot<K>> = on
        .iter()
        .copied()
        .filter(|s| s.kind == Kind::External)
        .collect();
    let protected = |of: &[&Slot<K>]| of.iter().filter(|s| s.protected).count();
    let free_external = external.iter().filter(|s| !s.protected).count();
    let over = |external: bool, of: &[&Slot<K>], max: usize| OverLimit {
        external,
        count: of.len(),
        max,
        protected: protected(of),
        exclude_core: limits.exclude_core,
        free_external,
        min_external: limits.min_external,
    };
    let mut warnings = Vec::new();
    if on.len() > limits.max_total {
        warnings.push(over(false, &on, limits.max_total));
    }
    if external.len() > limits.max_external {
        warnings.push(over(true, &external, limits.max_external));
    }
    warnings
}
