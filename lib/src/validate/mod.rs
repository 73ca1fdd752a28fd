//! `validate`: every problem in a catalog (or in the files given), for CI and for people
//! writing files by hand.
//!
//! Each file is checked on its own, in parallel: it parses, matches its JSON Schema
//! ([`schemas`](crate::catalog::schemas)), meets the store's rules, and what only code can check about one file
//! ([`checks`]). Then the checks across files run over what the first pass kept of each file:
//! duplicate `<slug, version>` in a bundle, duplicate IDs and bundle slugs, exported names
//! that collide, and, for `--provider`, more enabled tools than the provider takes. Every
//! finding names its file, the JSON pointer and the line and column of the value at fault.
//!
//! Agent files (`agents/<agentID>.json`) are part of the catalog: each is read as attach and
//! `agent` read it ([`AgentFile::from_doc`](crate::attach::AgentFile::from_doc), one set of
//! rules), and anything else in `agents/` is a stray.
//!
//! Given paths narrow the files checked (a folder: the catalog files under it); the checks
//! across files then run among those files only. The catalog's `toolctl.json` (found above
//! each path) still supplies the host policy.

mod checks;
mod locate;

pub use checks::MAX_DESCRIPTION;
pub use locate::{Locator, Position};

use crate::attach::agent::{AGENTS_DIR, AgentId};
use crate::attach::{AgentFile, ToolStatus};
use crate::catalog::config::Config;
use crate::catalog::names::NameMap;
use crate::catalog::schemas::Kind;
use crate::catalog::{BUNDLE_FILE, BUNDLES_DIR, CONFIG_FILE, TOOL_FILE, TOOLS_DIR, builtin};
use crate::provider::Provider;
use checks::{Context, Note};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use uuid::Uuid;

/// How bad a finding is: errors fail `validate`, warnings only with `--strict`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

/// One problem in one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub severity: Severity,
    /// Which rule: `parse`, `schema`, `name`, `folder`, `id`, `timestamps`, `duplicate`, …
    /// (the README lists them).
    pub rule: &'static str,
    pub file: PathBuf,
    /// 1-based; absent for a file that cannot be read.
    pub line: Option<usize>,
    pub column: Option<usize>,
    /// Where in the document (RFC 6901), when the finding is about a value.
    pub pointer: Option<String>,
    pub message: String,
    /// What the finding is about, for a caller that says it in its own words (the command
    /// line names its flags and commands); `message` says it without them.
    #[serde(skip)]
    pub about: Option<About>,
}

/// A finding whose remedy a caller may word itself (`message` names no flag or command).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum About {
    /// An HTTP tool with a method that changes things says neither `safe` nor an annotation:
    /// pick hides it unless unsafe tools are allowed.
    UnsafeMethod { method: String },
    /// More enabled tools than `provider` takes in one request (`max`).
    ProviderLimit {
        enabled: usize,
        provider: Provider,
        max: usize,
    },
}

/// What to validate.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// Files or folders; empty: the whole catalog.
    pub paths: Vec<PathBuf>,
    /// Also warn of what these providers would refuse, and of more enabled tools than they
    /// take.
    pub providers: Vec<Provider>,
}

/// What `validate` found.
#[derive(Debug, Default)]
pub struct Report {
    /// In file, line and column order.
    pub findings: Vec<Finding>,
    /// How many files were checked.
    pub files: usize,
}

impl Report {
    pub fn count(&self, severity: Severity) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity == severity)
            .count()
    }
}

/// A path argument that names nothing to check.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {reason}")]
pub struct BadPath {
    pub path: PathBuf,
    pub reason: String,
    /// Nothing is at the path (`NOT_FOUND`, as for every command's input file).
    pub missing: bool,
}

/// What a file is, which decides its checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Doc {
    /// A catalog file with a JSON Schema: `toolctl.json`, `bundle.json`, `tool.json`.
    Schema(Kind),
    /// An agent file: the tools attached to one agent.
    Agent,
}

/// What [`file_name_for`] calls an agent file's document (agent files have no one name: each
/// is `agents/<agentID>.json`).
pub const AGENT_DOC: &str = "agent.json";

/// Where a file sits in its catalog, which decides the folder checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    Config,
    /// `agents/<name>`: `named` is the agent the file name says it is (`None` when the name is
    /// no agent's), whose ID the file must hold.
    Agent {
        named: Option<AgentId>,
    },
    /// `bundles/<dir>/bundle.json`
    Bundle {
        dir: String,
    },
    /// `bundles/<dir>/tools/<slug>/<version>/tool.json`
    Tool {
        dir: String,
        slug: String,
        version: String,
    },
    /// Anywhere else (a file being written, outside any catalog).
    Loose,
}

/// What the checks across files keep of each file.
#[derive(Debug, Clone)]
pub enum Constraints {
    None,
    Bundle {
        id: Uuid,
        slug: String,
        /// Enabled and not deleted.
        live: bool,
        deleted: bool,
    },
    Tool {
        id: Uuid,
        bundle_id: Uuid,
        slug: String,
        version: String,
        /// Enabled, and without errors.
        enabled: bool,
    },
    /// An agent file that reads as attach reads it.
    Agent(Box<AgentFile>),
}

/// One file to check.
#[derive(Debug, Clone)]
struct Target {
    /// The catalog the file belongs to, if any.
    root: Option<PathBuf>,
    file: PathBuf,
    kind: Doc,
    place: Place,
    /// A tool or bundle file outside a catalog's bundles tree (or standard input): checked as
    /// `tool put` or `bundle put --file` reads it, with what put fills in filled in first
    /// ([`fill_for_put`](crate::catalog::fill::fill_for_put),
    /// [`fill_bundle_for_put`](crate::catalog::fill::fill_bundle_for_put)).
    as_put: bool,
    /// Not a file to read but a finding about the layout, made while the catalog was listed:
    /// a path where the catalog needs a folder that is something else (rule `folder`), a stray
    /// file where folders go or in `agents/` (`stray`), folder names that differ only by case
    /// (`case-collision`).
    layout: Option<Finding>,
}

/// Validate the catalog at `catalog` (no paths), or the paths of `request`. `progress` is told
/// `(done, total)` as files are checked.
pub fn validate(
    catalog: &Path,
    request: &Request,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Report, BadPath> {
    let mut targets = Vec::new();
    if request.paths.is_empty() {
        collect_catalog(catalog, &mut targets);
    } else {
        for path in &request.paths {
            collect_path(path, &mut targets)?;
        }
    }
    let mut seen = std::collections::HashSet::new();
    targets.retain(|t| seen.insert(t.file.clone()));

    let mut by_root: BTreeMap<Option<PathBuf>, Vec<Target>> = BTreeMap::new();
    for target in targets {
        by_root.entry(target.root.clone()).or_default().push(target);
    }
    let total: usize = by_root.values().map(Vec::len).sum();
    let done = AtomicUsize::new(0);
    let mut report = Report {
        files: total,
        ..Report::default()
    };
    for (root, targets) in by_root {
        // Files in no catalog are checked against the catalog in use, where `tool put`
        // would put them (its host policy).
        let config = root
            .as_deref()
            .or_else(|| Some(catalog).filter(|c| c.join(CONFIG_FILE).is_file()))
            .and_then(|root| Config::load(root).ok());
        let cx = Context {
            hosts: config.as_ref().map(|c| &c.hosts),
            mcp_servers: config.as_ref().map(|c| &c.mcp_servers),
            exec_allowed: config.as_ref().map(Config::exec_allowed),
            providers: &request.providers,
        };
        let checked: Vec<(Target, Vec<Finding>, Constraints)> = targets
            .into_par_iter()
            .map(|target| {
                let (findings, facts) = check_file(&target, &cx);
                progress(done.fetch_add(1, Ordering::Relaxed) + 1, total);
                (target, findings, facts)
            })
            .collect();
        let mut across = Vec::new();
        across_files(
            root.as_deref(),
            &checked,
            config.as_ref(),
            &request.providers,
            &mut across,
        );
        if let Some(root) = &root {
            agent_tools(root, &checked, &mut across);
        }
        for (_, findings, _) in checked {
            report.findings.extend(findings);
        }
        report.findings.extend(place_all(across));
    }
    sort(&mut report.findings);
    Ok(report)
}

/// Findings in file, line and column order.
fn sort(findings: &mut [Finding]) {
    findings.sort_by(|a, b| {
        (&a.file, a.line, a.column, a.severity, a.rule, &a.message)
            .cmp(&(&b.file, b.line, b.column, b.severity, b.rule, &b.message))
    });
}

/// Every file of the catalog at `root`.
fn collect_catalog(root: &Path, out: &mut Vec<Target>) {
    let config = root.join(CONFIG_FILE);
    if config.is_file() {
        out.push(target(Some(root), config));
    }
    // A folder the catalog needs that is something else: readers see no bundles (or no tools)
    // there, so validate must not pass on it. (git checks a symlink out as a small text file
    // where `core.symlinks` is false.)
    let mut found: Vec<Finding> = Vec::new();
    let mut layout = |file: PathBuf, severity: Severity, rule: &'static str, message: String| {
        found.push(Finding {
            severity,
            rule,
            file,
            line: None,
            column: None,
            pointer: None,
            message,
            about: None,
        });
    };
    let must_be_folder = |path: PathBuf, layout: &mut dyn FnMut(_, _, _, _)| {
        if let Some(problem) = crate::catalog::not_a_folder(&path) {
            layout(path, Severity::Error, "folder", problem.message);
        }
    };
    must_be_folder(root.join(BUNDLES_DIR), &mut layout);
    let bundles = listed(&root.join(BUNDLES_DIR), "bundle", &mut layout);
    for dir in &bundles {
        must_be_folder(dir.join(TOOLS_DIR), &mut layout);
    }
    for dir in bundles {
        let bundle_file = dir.join(BUNDLE_FILE);
        if !bundle_file.exists() && crate::catalog::is_leftover_dir(&dir) {
            continue;
        }
        out.push(target(Some(root), bundle_file));
        for slug in listed(&dir.join(TOOLS_DIR), "tool slug", &mut layout) {
            for version in listed(&slug, "version", &mut layout) {
                let file = version.join(TOOL_FILE);
                // A version folder without its file is what a killed write leaves; the store
                // skips it too. Anything else named tool.json (a FIFO, a symlink) is checked,
                // so validate reports what the store refuses to read.
                if std::fs::symlink_metadata(&file).is_ok() {
                    out.push(target(Some(root), file));
                }
            }
        }
    }
    let agents = root.join(AGENTS_DIR);
    must_be_folder(agents.clone(), &mut layout);
    for path in visible_entries(&agents) {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if !path.is_dir() && AgentId::from_file_name(&name).is_some() {
            out.push(target(Some(root), path));
            continue;
        }
        // Attach and `agent` read only the file an agent's ID names; this one nobody reads.
        let rename = name
            .strip_suffix(".json")
            .and_then(|stem| AgentId::parse(stem).ok())
            .map(|id| format!("; rename it to {id}.json"))
            .unwrap_or_default();
        layout(
            path,
            Severity::Warning,
            "stray",
            format!(
                "not an agent file (agent-<uuid>.json, the UUID in lowercase): toolctl reads nothing from it{rename}"
            ),
        );
    }
    for finding in found {
        out.push(Target {
            layout: Some(finding.clone()),
            ..target(Some(root), finding.file)
        });
    }
}

/// The visible sub-folders of `dir`, where the catalog keeps one folder per `what` (a bundle,
/// a tool slug, a version), in name order. What else is there is told to `layout`: a visible
/// entry that is not a folder (a `README.md`, a symlink to a file) is read by nobody (rule
/// `stray`, a warning: such files are often harmless, hidden ones like `.gitkeep` are not
/// mentioned), and two folders whose names differ only by case cannot both be checked out on a
/// case-insensitive file system, macOS's and Windows' default (rule `case-collision`).
fn listed(
    dir: &Path,
    what: &str,
    layout: &mut dyn FnMut(PathBuf, Severity, &'static str, String),
) -> Vec<PathBuf> {
    let entries = visible_entries(dir);
    let (dirs, stray): (Vec<PathBuf>, Vec<PathBuf>) = entries.into_iter().partition(|p| p.is_dir());
    for path in stray {
        layout(
            path,
            Severity::Warning,
            "stray",
            format!(
                "not a folder where each entry is a {what} folder: toolctl reads nothing from it"
            ),
        );
    }
    let mut by_folded: BTreeMap<String, &PathBuf> = BTreeMap::new();
    for path in &dirs {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if let Some(first) = by_folded.insert(crate::catalog::rules::case_folded(&name), path) {
            layout(
                path.clone(),
                Severity::Warning,
                "case-collision",
                format!(
                    "{what} folder '{name}' and '{}' differ only by case: on a case-insensitive file system (macOS, Windows) they are one folder, so a checkout there breaks",
                    first.display()
                ),
            );
        }
    }
    dirs
}

/// The files one path argument names.
fn collect_path(path: &Path, out: &mut Vec<Target>) -> Result<(), BadPath> {
    let bad = |reason: &str| BadPath {
        path: path.to_owned(),
        reason: reason.to_owned(),
        missing: false,
    };
    let meta = std::fs::metadata(path).map_err(|e| BadPath {
        missing: e.kind() == std::io::ErrorKind::NotFound,
        ..bad(&format!("cannot read it: {e}"))
    })?;
    if meta.is_dir() {
        if path.join(CONFIG_FILE).is_file() {
            collect_catalog(path, out);
            return Ok(());
        }
        let root = catalog_above(path);
        let before = out.len();
        walk_json(path, root.as_deref(), &mut |file| {
            out.push(target(root.as_deref(), file));
        });
        if out.len() == before {
            return Err(bad(
                "no toolctl.json, bundle.json, tool.json or agent file under it",
            ));
        }
        return Ok(());
    }
    // A bare file name's folder is the working folder.
    let folder = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let root = catalog_above(folder);
    out.push(target(root.as_deref(), path.to_owned()));
    Ok(())
}

/// The nearest folder at or above `dir` holding `toolctl.json`.
fn catalog_above(dir: &Path) -> Option<PathBuf> {
    let dir = std::path::absolute(dir).ok()?;
    dir.ancestors()
        .find(|d| d.join(CONFIG_FILE).is_file())
        .map(Path::to_owned)
}

/// The entries of `dir` whose names do not start with a dot, in name order (none when it
/// cannot be read).
fn visible_entries(dir: &Path) -> Vec<PathBuf> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| e.path())
        .collect();
    entries.sort();
    entries
}

/// The catalog files under `dir` (hidden folders skipped), in name order: those named as
/// catalog files, and the agent files of the catalog at `root`.
fn walk_json(dir: &Path, root: Option<&Path>, found: &mut dyn FnMut(PathBuf)) {
    let entries = visible_entries(dir);
    for entry in entries {
        if entry.is_dir() {
            walk_json(&entry, root, found);
        } else if entry
            .file_name()
            .is_some_and(|n| n == CONFIG_FILE || n == BUNDLE_FILE || n == TOOL_FILE)
            || (in_agents(root, &entry) && entry.extension().is_some_and(|e| e == "json"))
        {
            found(entry);
        }
    }
}

/// The catalog file a document outside a catalog is, by its fields (`toolctl.json`,
/// `bundle.json` or `tool.json`, or [`AGENT_DOC`]): an agent has an `agentID` but no slug, a
/// bundle has a slug but no version or type, the configuration neither slug nor version but
/// its own fields. For standard input and for a file outside a catalog whose name is none of
/// the three.
pub fn file_name_for(doc: &serde_json::Value) -> &'static str {
    let has = |key: &str| doc.get(key).is_some();
    if has("agentID") && !has("slug") {
        AGENT_DOC
    } else if !has("slug") && (has("schemaVersion") || has("allowedHosts")) && !has("version") {
        CONFIG_FILE
    } else if has("slug") && !has("version") && !has("type") {
        BUNDLE_FILE
    } else {
        TOOL_FILE
    }
}

/// A file with its kind (by name; in `agents/`, an agent file; by its fields for a file
/// outside a catalog's bundles tree named otherwise, see [`file_name_for`]) and place (by where
/// it is in its catalog).
fn target(root: Option<&Path>, file: PathBuf) -> Target {
    let name = file.file_name().and_then(|n| n.to_str());
    // A file in the bundles tree, even where no tool belongs, is a catalog file: a tool unless
    // named otherwise, checked in full.
    let inside = in_bundles(root, &file);
    let agent = in_agents(root, &file);
    let kind = match name {
        _ if agent => Doc::Agent,
        Some(CONFIG_FILE) => Doc::Schema(Kind::Config),
        Some(BUNDLE_FILE) => Doc::Schema(Kind::Bundle),
        Some(TOOL_FILE) => Doc::Schema(Kind::Tool),
        _ if inside => Doc::Schema(Kind::Tool),
        _ => match sniffed(&file, root) {
            CONFIG_FILE => Doc::Schema(Kind::Config),
            BUNDLE_FILE => Doc::Schema(Kind::Bundle),
            AGENT_DOC => Doc::Agent,
            _ => Doc::Schema(Kind::Tool),
        },
    };
    let place = if agent {
        Place::Agent {
            named: name.and_then(AgentId::from_file_name),
        }
    } else {
        place_of(root, &file, kind)
    };
    let as_put =
        matches!(kind, Doc::Schema(Kind::Tool | Kind::Bundle)) && place == Place::Loose && !inside;
    Target {
        root: root.map(Path::to_owned),
        as_put,
        file,
        kind,
        place,
        layout: None,
    }
}

/// Where a catalog file (not an agent's) sits in the catalog at `root`.
fn place_of(root: Option<&Path>, file: &Path, kind: Doc) -> Place {
    let Doc::Schema(kind) = kind else {
        return Place::Loose;
    };
    root.and_then(|root| {
        let absolute = std::path::absolute(file).ok()?;
        let relative = absolute.strip_prefix(root).ok()?;
        let parts: Vec<&str> = relative.iter().filter_map(|p| p.to_str()).collect();
        match (kind, parts.as_slice()) {
            (Kind::Config, [CONFIG_FILE]) => Some(Place::Config),
            (Kind::Bundle, [BUNDLES_DIR, dir, BUNDLE_FILE]) => Some(Place::Bundle {
                dir: (*dir).to_owned(),
            }),
            (Kind::Tool, _) => {
                crate::catalog::parse_tool_path(&parts.join("/")).map(|(dir, slug, version)| {
                    Place::Tool {
                        dir: dir.to_owned(),
                        slug: slug.to_owned(),
                        version: version.to_owned(),
                    }
                })
            }
            _ => None,
        }
    })
    .unwrap_or(Place::Loose)
}

/// Whether `file` lies in the agents folder of the catalog at `root` (not below it).
fn in_agents(root: Option<&Path>, file: &Path) -> bool {
    root.is_some_and(|root| {
        std::path::absolute(file)
            .is_ok_and(|file| file.parent() == Some(root.join(AGENTS_DIR).as_path()))
    })
}

/// Whether `file` lies in the bundles tree of the catalog at `root`.
fn in_bundles(root: Option<&Path>, file: &Path) -> bool {
    root.is_some_and(|root| {
        std::path::absolute(file).is_ok_and(|file| file.starts_with(root.join(BUNDLES_DIR)))
    })
}

/// [`file_name_for`] the document in `file`; `tool.json` when it cannot be read as JSON (the
/// checks then report why).
fn sniffed(file: &Path, root: Option<&Path>) -> &'static str {
    crate::base::capped::read_text(file, root)
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .map_or(TOOL_FILE, |doc| file_name_for(&doc))
}

/// Read, parse and check one file; its findings are placed in it.
fn check_file(target: &Target, cx: &Context) -> (Vec<Finding>, Constraints) {
    use crate::base::capped::{self, ReadError};
    if let Some(finding) = &target.layout {
        return (vec![finding.clone()], Constraints::None);
    }
    match capped::read_text(&target.file, target.root.as_deref()) {
        Ok(text) => check_text(target, &text, cx),
        Err(e) => {
            // A bundle folder without its file is the layout's problem (rule `folder`, as the
            // README's table says), not the file's.
            let (rule, message) = match e {
                ReadError::Missing if target.kind == Doc::Schema(Kind::Bundle) => {
                    ("folder", "the bundle folder has no bundle.json".to_owned())
                }
                ReadError::Missing => ("read", "cannot read it: no such file".to_owned()),
                other => ("read", other.to_string()),
            };
            let finding = Finding {
                severity: Severity::Error,
                rule,
                file: target.file.clone(),
                line: None,
                column: None,
                pointer: None,
                message,
                about: None,
            };
            (vec![finding], Constraints::None)
        }
    }
}

/// Check documents that are not files of a catalog on disk (`bundle import` checks the
/// entries of an archive): each with the name findings call it by, where it would be, and its
/// text. They are checked as `validate` checks files, with no host policy (a tool whose host a
/// catalog does not allow is a usable file, listed as unavailable there); the checks across
/// files run among these documents.
pub fn check_documents(documents: &[(PathBuf, Place, &str)]) -> Vec<Finding> {
    let cx = Context {
        hosts: None,
        mcp_servers: None,
        exec_allowed: None,
        providers: &[],
    };
    let checked: Vec<(Target, Vec<Finding>, Constraints)> = documents
        .par_iter()
        .map(|(name, place, text)| {
            let kind = match place {
                Place::Config => Doc::Schema(Kind::Config),
                Place::Bundle { .. } => Doc::Schema(Kind::Bundle),
                Place::Tool { .. } | Place::Loose => Doc::Schema(Kind::Tool),
                Place::Agent { .. } => Doc::Agent,
            };
            let target = Target {
                root: None,
                file: name.clone(),
                kind,
                place: place.clone(),
                as_put: false,
                layout: None,
            };
            let (findings, facts) = check_text(&target, text, &cx);
            (target, findings, facts)
        })
        .collect();
    let mut across = Vec::new();
    across_files(None, &checked, None, &[], &mut across);
    let mut findings: Vec<Finding> = checked.into_iter().flat_map(|(_, f, _)| f).collect();
    findings.extend(place_all(across));
    sort(&mut findings);
    findings
}

/// Parse and check the text of one file; its findings are placed in it.
fn check_text(target: &Target, text: &str, cx: &Context) -> (Vec<Finding>, Constraints) {
    let finding = |note: Note, position: Option<Position>| Finding {
        severity: note.severity,
        rule: note.rule,
        file: target.file.clone(),
        line: position.map(|p| p.line),
        column: position.map(|p| p.column),
        pointer: Some(note.pointer).filter(|_| position.is_some()),
        message: note.message,
        about: note.about,
    };
    if text.starts_with(crate::catalog::model::BOM) {
        let mut found = finding(
            Note::error("parse", "", crate::catalog::model::BOM_PROBLEM),
            Some(Position { line: 1, column: 1 }),
        );
        found.pointer = None;
        return (vec![found], Constraints::None);
    }
    let mut doc: serde_json::Value = match serde_json::from_str(text) {
        Ok(doc) => doc,
        Err(e) => {
            // The message without its position, which the finding carries.
            let syntax = crate::base::syntax::SyntaxError::of(&e);
            let position = Position {
                line: syntax.line,
                column: syntax.column,
            };
            let mut found = finding(
                Note::error("parse", "", format!("not JSON: {}", syntax.message)),
                Some(position),
            );
            found.pointer = None;
            return (vec![found], Constraints::None);
        }
    };
    if !doc.is_object() {
        let note = Note::error("schema", "", "the document must be a JSON object");
        return (
            vec![finding(note, Some(Position { line: 1, column: 1 }))],
            Constraints::None,
        );
    }
    let (notes, facts) = match target.kind {
        Doc::Agent => checks::check_agent(&doc, &target.place),
        Doc::Schema(kind) => {
            if target.as_put
                && let Some(fields) = doc.as_object_mut()
            {
                use crate::catalog::fill;
                let now = crate::base::time::now();
                match kind {
                    // Where put would take the bundle from (`--bundle`) is not known here: a
                    // new ID stands for it, so loose files are never duplicates of each other
                    // by it.
                    Kind::Tool => fill::fill_for_put(fields, Uuid::now_v7(), now),
                    // A new bundle's ID, when the file has none, is made by put too.
                    Kind::Bundle => fill::fill_bundle_for_put(fields, Uuid::now_v7(), now),
                    Kind::Config => {}
                }
            }
            let (mut notes, facts) = checks::check(kind, &doc, &target.file, &target.place, cx);
            // The size rule `put` keeps: the file as toolctl would write it (pretty, with the
            // fields put fills), not as the user's file is, is what every reader caps.
            if target.as_put
                && let Some(over) = crate::catalog::store::JsonFile::new(&doc).oversized()
            {
                notes.push(Note::error("size", over.pointer, over.message));
            }
            (notes, facts)
        }
    };
    if notes.is_empty() {
        return (Vec::new(), facts);
    }
    let locator = Locator::new(text);
    let findings = notes
        .into_iter()
        .map(|note| {
            let position = locator.find(&note.pointer);
            finding(note, position)
        })
        .collect();
    (findings, facts)
}

/// A finding of the checks across files, before it is placed in its file.
struct Across {
    file: PathBuf,
    note: Note,
}

/// Place each finding at its pointer, reading each file once.
fn place_all(across: Vec<Across>) -> Vec<Finding> {
    let mut by_file: BTreeMap<PathBuf, Vec<Note>> = BTreeMap::new();
    for item in across {
        by_file.entry(item.file).or_default().push(item.note);
    }
    let mut out = Vec::new();
    for (file, notes) in by_file {
        let text = crate::base::capped::read_text(&file, None).unwrap_or_default();
        let locator = Locator::new(&text);
        for note in notes {
            // A finding about the whole catalog (no pointer) has no place in the file.
            let position = (!note.pointer.is_empty())
                .then(|| locator.find(&note.pointer))
                .flatten();
            out.push(Finding {
                severity: note.severity,
                rule: note.rule,
                file: file.clone(),
                line: position.map(|p| p.line),
                column: position.map(|p| p.column),
                pointer: Some(note.pointer).filter(|p| !p.is_empty()),
                message: note.message,
                about: note.about,
            });
        }
    }
    out
}

/// Rule `agent-tool`: each tool of the agent files among `checked` that attach would remove
/// from its agent (gone from the catalog, its bundle deleted or disabled, disabled,
/// unavailable), found as attach finds it ([`crate::attach::inspect_files`]) in the whole
/// catalog at `root`, whichever files were given. A warning: the agent still works, without
/// the tool. A catalog whose `toolctl.json` is unusable (reported itself) is not searched.
fn agent_tools(
    root: &Path,
    checked: &[(Target, Vec<Finding>, Constraints)],
    out: &mut Vec<Across>,
) {
    let agents: Vec<(&Path, &AgentFile)> = checked
        .iter()
        .filter_map(|(target, _, facts)| match facts {
            Constraints::Agent(file) if !file.tools.is_empty() => {
                Some((target.file.as_path(), &**file))
            }
            _ => None,
        })
        .collect();
    if agents.is_empty() {
        return;
    }
    let Ok(catalog) = crate::catalog::Catalog::open(root) else {
        return;
    };
    let files: Vec<&AgentFile> = agents.iter().map(|(_, file)| *file).collect();
    let statuses = match crate::attach::inspect_files(&catalog, &files) {
        Ok(statuses) => statuses,
        Err(e) => {
            for (path, _) in &agents {
                out.push(Across {
                    file: path.to_path_buf(),
                    note: Note::warning(
                        "agent-tool",
                        "",
                        format!("cannot check the attached tools against the catalog: {e}"),
                    ),
                });
            }
            return;
        }
    };
    for ((path, file), statuses) in agents.iter().zip(statuses) {
        for (i, (tool, status)) in file.tools.iter().zip(statuses).enumerate() {
            if let ToolStatus::Gone(why) = status {
                out.push(Across {
                    file: path.to_path_buf(),
                    note: Note::warning(
                        "agent-tool",
                        format!("/tools/{i}"),
                        format!(
                            "the attached tool {} ({}) cannot be called: {why}; the next attach removes it from the agent",
                            tool.reference, tool.name
                        ),
                    ),
                });
            }
        }
    }
}

/// The checks across the files of one catalog.
fn across_files(
    root: Option<&Path>,
    checked: &[(Target, Vec<Finding>, Constraints)],
    config: Option<&Config>,
    providers: &[Provider],
    out: &mut Vec<Across>,
) {
    let mut bundles: HashMap<Uuid, (&str, bool, bool)> = HashMap::new();
    let mut bundle_slugs: BTreeMap<&str, Vec<&Path>> = BTreeMap::new();
    let mut tool_ids: BTreeMap<Uuid, Vec<&Path>> = BTreeMap::new();
    let mut versions: BTreeMap<(Uuid, &str, &str), Vec<&Path>> = BTreeMap::new();
    for (target, _, facts) in checked {
        match facts {
            Constraints::Bundle {
                id,
                slug,
                live,
                deleted,
            } => {
                bundles.insert(*id, (slug, *live, *deleted));
                bundle_slugs.entry(slug).or_default().push(&target.file);
            }
            Constraints::Tool {
                id,
                bundle_id,
                slug,
                version,
                ..
            } => {
                tool_ids.entry(*id).or_default().push(&target.file);
                versions
                    .entry((*bundle_id, slug, version))
                    .or_default()
                    .push(&target.file);
            }
            Constraints::None | Constraints::Agent(_) => {}
        }
    }
    // Other files are named from the catalog's root, the way its layout reads.
    let others = |files: &[&Path], me: &Path| {
        files
            .iter()
            .filter(|f| **f != me)
            .map(|f| {
                root.and_then(|r| f.strip_prefix(r).ok())
                    .unwrap_or(f)
                    .display()
                    .to_string()
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut duplicates = |files: &[&Path], pointer: &str, what: String| {
        if files.len() < 2 {
            return;
        }
        for file in files {
            out.push(Across {
                file: file.to_path_buf(),
                note: Note::error(
                    "duplicate",
                    pointer,
                    format!("{what} also in {}", others(files, file)),
                ),
            });
        }
    };
    for (slug, files) in &bundle_slugs {
        duplicates(files, "/slug", format!("bundle slug '{slug}' is used"));
    }
    for (id, files) in &tool_ids {
        duplicates(files, "/toolID", format!("toolID {id} is used"));
    }
    for ((_, slug, version), files) in &versions {
        duplicates(
            files,
            "/version",
            format!("{slug}@{version} is in this bundle twice: it is"),
        );
    }

    // Exported names: over every tool of every bundle that is not deleted, as export builds
    // them. Bundles whose bundle.json was not among the files checked are read for their slug,
    // once each.
    let mut read_bundles: HashMap<Uuid, Option<(String, bool, bool)>> = HashMap::new();
    let mut bundle_slug = |id: Uuid| -> Option<(String, bool, bool)> {
        if let Some((slug, live, deleted)) = bundles.get(&id) {
            return Some(((*slug).to_owned(), *live, *deleted));
        }
        read_bundles
            .entry(id)
            .or_insert_with(|| {
                let root = root?;
                let path = root
                    .join(BUNDLES_DIR)
                    .join(id.to_string())
                    .join(BUNDLE_FILE);
                let doc: serde_json::Value =
                    serde_json::from_str(&crate::base::capped::read_text(&path, Some(root)).ok()?)
                        .ok()?;
                let bundle: crate::catalog::model::Bundle =
                    crate::catalog::model::typed(&doc, "").ok()?;
                let deleted = bundle.soft_deleted_at.is_some();
                Some((bundle.slug, bundle.is_enabled && !deleted, deleted))
            })
            .clone()
    };
    let mut keyed: Vec<((String, String), &Path, bool)> = Vec::new();
    for (target, _, facts) in checked {
        if let Constraints::Tool {
            bundle_id,
            slug,
            enabled,
            ..
        } = facts
            && let Some((bundle, live, deleted)) = bundle_slug(*bundle_id)
            && !deleted
        {
            keyed.push(((bundle, slug.clone()), &target.file, *enabled && live));
        }
    }
    let builtin_slug = builtin::SLUG.to_owned();
    let builtin_tools: Vec<(String, bool)> = builtin::tools()
        .iter()
        .map(|t| {
            let enabled = config.map_or(t.view.is_enabled, |c| {
                c.builtin_bundle_enabled()
                    && c.builtin_tool_enabled(&t.view.slug)
                        .unwrap_or(t.view.is_enabled)
            });
            (t.view.slug.clone(), enabled)
        })
        .collect();
    let names = NameMap::build(
        keyed
            .iter()
            .map(|((b, s), _, _)| (b.as_str(), s.as_str()))
            .chain(
                builtin_tools
                    .iter()
                    .map(|(s, _)| (builtin_slug.as_str(), s.as_str())),
            ),
    );
    for (wanted, keys) in names.collisions() {
        let refs: Vec<String> = keys.iter().map(|(b, s)| format!("{b}/{s}")).collect();
        let exported: Vec<String> = keys
            .iter()
            .filter_map(|(b, s)| names.name(b, s))
            .map(|n| format!("'{n}'"))
            .collect();
        let message = if keys.len() == 1 {
            format!(
                "the exported name '{wanted}' of {} is another tool's slug, so it goes out as {}; rename the slug",
                refs.join(""),
                exported.join("")
            )
        } else {
            format!(
                "{} all want the exported name '{wanted}', so they go out as {}, which models read less well; rename one of the slugs",
                refs.join(" and "),
                exported.join(" and ")
            )
        };
        for (_, file, _) in keyed.iter().filter(|(k, _, _)| keys.contains(k)) {
            out.push(Across {
                file: file.to_path_buf(),
                note: Note::error("name-collision", "/slug", message.clone()),
            });
        }
    }

    // More enabled tools than a provider takes in one request (one version per tool slug).
    let mut enabled: std::collections::BTreeSet<(&str, &str)> = keyed
        .iter()
        .filter(|(_, _, enabled)| *enabled)
        .map(|((b, s), _, _)| (b.as_str(), s.as_str()))
        .collect();
    enabled.extend(
        builtin_tools
            .iter()
            .filter(|(_, on)| *on)
            .map(|(s, _)| (builtin_slug.as_str(), s.as_str())),
    );
    for provider in providers {
        if let Some(max) = provider.max_tools()
            && enabled.len() > max
        {
            let file = root.map_or_else(|| PathBuf::from(CONFIG_FILE), |r| r.join(CONFIG_FILE));
            out.push(Across {
                file,
                note: Note::warning(
                    "provider-limit",
                    "",
                    format!(
                        "{} tools are enabled, more than {provider} takes in one request ({max}); send a few picked for the task, or export a subset",
                        enabled.len()
                    ),
                )
                .about(About::ProviderLimit {
                    enabled: enabled.len(),
                    provider: *provider,
                    max,
                }),
            });
        }
    }
}
