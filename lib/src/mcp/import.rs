//! `toolctl mcp import <server>`: an MCP server's tools as `type: "mcp"` tools of a bundle.
//!
//! The server (declared in `mcpServers` of `toolctl.json`) is asked for all its tools (every
//! `tools/list` page, [`invoke::mcp::list_tools`]), and each becomes one `tool.json` with its
//! schemas and annotations verbatim: `inputSchema` as `argSchema`, `outputSchema`,
//! `annotations`, `title` (or the annotations' title, or the name) as `displayName`, and `safe`
//! from the annotations (read-only, or not destructive; MCP's defaults otherwise: unsafe).
//!
//! Again later, against what the bundle holds for that server (tools found by `impl.server` and
//! `impl.tool`, not by slug): a new tool is added (version `1`), a tool whose imported fields
//! changed gets a new version (the next number, which becomes its default version), an
//! unchanged one is left alone, and one the server no longer lists is reported, not deleted.
//! What the server lists that is no MCP tool (an `inputSchema` that is not an object…) is
//! skipped by the listing, named; the rest is imported (the server's other tools are usable,
//! and nothing here can mend that one), and a version imported before of a skipped tool is
//! neither changed nor reported vanished.
//!
//! [`prepare`] lists the server's tools and decides all of this against the bundle (`plan`),
//! checking every document it would write before anything is written. The writes are the
//! caller's: they are `tool put`'s code, in `ops`, a layer above this one. A tool that
//! `tool put` would refuse (a schema toolctl's rules reject, a `tool.json` over 4 MiB) is refused
//! alone, named with each violation ([`Plan::refused`]), as a skipped one is: the server's
//! other tools are imported, since nothing on toolctl's side can mend the server's, and what is
//! written is valid all the same.

use crate::base::same_json::same_json_opt;
use crate::catalog::error::{Error as CatalogError, Violation};
use crate::catalog::model::{self, Tool, ToolType};
use crate::catalog::rules::case_folded;
use crate::catalog::{BundleEntry, Catalog, Problem, ToolEntry};
use crate::invoke::mcp::Listing;
use crate::invoke::{self, Failure};
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

/// The fields an import writes from the server's description of a tool; a change in any of
/// them is a new version.
const IMPORTED: &[&str] = &[
    "displayName",
    "description",
    "argSchema",
    "outputSchema",
    "annotations",
    "safe",
];

/// How long listing a server's tools may take (starting it included), unless it sets one.
const LIST_TIMEOUT: Duration = Duration::from_secs(60);

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    #[error("{}", .0.message())]
    Server(Failure),
}

/// One tool the import writes.
#[derive(Debug, Clone)]
pub struct Planned {
    /// The server's name for it.
    pub name: String,
    pub slug: String,
    pub version: String,
    /// The version it replaces as the default, for a changed tool.
    pub previous: Option<String>,
    /// The `tool.json` to put (without IDs and timestamps).
    pub doc: Value,
}

/// What an import does.
#[derive(Debug, Default)]
pub struct Plan {
    /// New tools.
    pub added: Vec<Planned>,
    /// Tools whose imported fields changed: a new version each.
    pub changed: Vec<Planned>,
    /// `slug@version` of tools that are as the server describes them.
    pub unchanged: Vec<String>,
    /// `slug@version` of tools of this server that it no longer lists (left in the catalog).
    pub vanished: Vec<String>,
    /// Files of the bundle that could not be read.
    pub problems: Vec<Problem>,
    /// Tools of the server that `tool put` would refuse: not imported (a version imported
    /// before stays the default, and is not reported vanished), each with why.
    pub refused: Vec<Refused>,
}

/// A tool of the server that toolctl's rules refuse.
#[derive(Debug)]
pub struct Refused {
    /// The server's name for it.
    pub name: String,
    /// What `tool put` says of its document (pointers into the `tool.json` it would be).
    pub violations: Vec<Violation>,
}

/// An import decided and checked against the catalog, before anything is written: what
/// [`prepare`] gives the caller to write and to report.
#[derive(Debug)]
pub struct Prepared {
    /// The server's name in `mcpServers`.
    pub server: String,
    /// The slug of the bundle the tools go in.
    pub bundle: String,
    /// Whether that bundle exists; when not, it is to be made before the tools are written.
    pub bundle_exists: bool,
    /// What the server listed.
    pub listing: Listing,
    /// What the import does, the new tools whose exported names would collide refused.
    pub plan: Plan,
}

/// List the tools of `server` and plan their import into `bundle` (by slug; default: a
/// bundle named after the server, which need not exist yet). The new tools whose exported
/// names would collide are refused alone (`Plan::refuse_colliding`).
pub fn prepare(catalog: &Catalog, server: &str, bundle: Option<&str>) -> Result<Prepared, Error> {
    let listing = list(catalog, server)?;
    let slug = bundle.unwrap_or(server).to_owned();
    let existing = match catalog.find_bundle(&slug) {
        Ok(bundle) => Some(bundle),
        Err(CatalogError::NotFound { .. }) => None,
        Err(e) => return Err(e.into()),
    };
    let mut plan = plan(catalog, existing.as_ref(), server, &listing)?;
    plan.refuse_colliding(catalog, &slug)?;
    Ok(Prepared {
        server: server.to_owned(),
        bundle: slug,
        bundle_exists: existing.is_some(),
        listing,
        plan,
    })
}

impl Prepared {
    /// The tools to write: the added ones, then the changed ones.
    pub fn writes(&self) -> impl Iterator<Item = &Planned> {
        self.plan.added.iter().chain(&self.plan.changed)
    }

    /// The documents to put, in [`writes`](Self::writes)' order, each with the name errors
    /// give it (`MCP server 's' tool 't'`).
    pub fn documents(&self) -> Vec<(Value, String)> {
        self.writes()
            .map(|p| {
                let source = format!("MCP server '{}' tool '{}'", self.server, p.name);
                (p.doc.clone(), source)
            })
            .collect()
    }

    /// How many tools the server listed, the skipped ones included.
    pub fn listed(&self) -> usize {
        self.listing.tools.len() + self.listing.skipped.len()
    }

    /// The reference of a tool written: `bundle/slug@version`.
    pub fn reference(&self, planned: &Planned) -> String {
        format!("{}/{}@{}", self.bundle, planned.slug, planned.version)
    }
}

/// List the tools of `server`, as declared in the catalog's `toolctl.json`.
fn list(catalog: &Catalog, server: &str) -> Result<Listing, Error> {
    let config = catalog.config();
    let Some(entry) = config.mcp_servers.get(server) else {
        let declared: Vec<&str> = config.mcp_servers.keys().map(String::as_str).collect();
        return Err(CatalogError::NotFound {
            what: "MCP server",
            name: server.to_owned(),
            hint: Some(
                if declared.is_empty() {
                    "declare it in mcpServers of toolctl.json".to_owned()
                } else {
                    format!(
                        "toolctl.json declares {}; add it to mcpServers",
                        declared.join(", ")
                    )
                }
                .into(),
            ),
        }
        .into());
    };
    // An entry `validate` reports (its rules or the schema's) is refused as `validate` words
    // it: VALIDATION_ERROR at its pointer in toolctl.json, not a server that could not be
    // reached. A host allowedHosts does not list stays HOST_NOT_ALLOWED, as for a call.
    let file = catalog.root().join(crate::catalog::CONFIG_FILE);
    let at = crate::base::pointer::join("/mcpServers", server);
    let problems: Vec<Violation> = crate::catalog::config::problems(&config.doc, &file)
        .into_iter()
        .filter(|v| v.pointer == at || v.pointer.starts_with(&format!("{at}/")))
        .filter(|v| v.rule != Some("host"))
        .collect();
    if !problems.is_empty() {
        return Err(CatalogError::invalid(file.display().to_string(), problems).into());
    }
    let timeout = entry.timeout_ms.map_or(LIST_TIMEOUT, Duration::from_millis);
    invoke::mcp::list_tools(server, entry, &config.hosts, timeout).map_err(Error::Server)
}

/// What importing `listing` (the server's tools) from `server` into `bundle` (when it exists)
/// does. Every document is checked as `tool put` checks it. A tool the server listed but the
/// listing skipped (no MCP tool) is neither imported nor reported vanished: the bundle keeps
/// what it has of it.
fn plan(
    catalog: &Catalog,
    bundle: Option<&BundleEntry>,
    server: &str,
    listing: &Listing,
) -> Result<Plan, Error> {
    let listed = &listing.tools;
    let mut plan = Plan::default();
    let existing: Vec<ToolEntry> = match bundle {
        Some(bundle) => catalog.bundle_tools(bundle, &mut plan.problems),
        None => Vec::new(),
    };
    // This server's tools in the bundle, by their name on the server: the newest version.
    let mut ours: BTreeMap<String, &ToolEntry> = BTreeMap::new();
    for entry in &existing {
        if let Some(mcp) = server_tool(entry, server) {
            let newer = ours
                .get(&mcp)
                .is_none_or(|known| known.tool.created_at < entry.tool.created_at);
            if newer {
                ours.insert(mcp, entry);
            }
        }
    }
    // The bundle's slugs case-folded, as `free_slug` compares them: those of its tools, and
    // every slug folder (one whose tool.json is broken, or a killed write's empty one, holds
    // its name too).
    let folders = bundle.map(|b| catalog.tool_slugs(b)).unwrap_or_default();
    let mut taken: BTreeSet<String> = existing
        .iter()
        .map(|e| e.tool.slug.as_str())
        .chain(folders.iter().map(String::as_str))
        .map(case_folded)
        .collect();
    let mut seen = BTreeSet::new();
    for tool in listed {
        // Every listed tool has a name (a tool without one is skipped by the listing).
        let Some(name) = tool.get("name").and_then(Value::as_str) else {
            continue;
        };
        if !seen.insert(name.to_owned()) {
            continue;
        }
        match ours.get(name) {
            None => {
                let slug = free_slug(name, &taken);
                let doc = document(server, tool, &slug, "1");
                if plan.refuses(&doc, name) {
                    continue;
                }
                taken.insert(case_folded(&slug));
                plan.added.push(Planned {
                    name: name.to_owned(),
                    slug,
                    version: "1".to_owned(),
                    previous: None,
                    doc,
                });
            }
            Some(entry) => {
                let slug = entry.tool.slug.clone();
                let mut doc = document(server, tool, &slug, &entry.tool.version);
                if IMPORTED
                    .iter()
                    .all(|f| same_json_opt(doc.get(*f), entry.doc.get(*f)))
                {
                    plan.unchanged
                        .push(format!("{slug}@{}", entry.tool.version));
                    continue;
                }
                let version = next_version(&existing, &slug);
                doc["version"] = json!(version);
                if plan.refuses(&doc, name) {
                    continue;
                }
                plan.changed.push(Planned {
                    name: name.to_owned(),
                    slug,
                    version,
                    previous: Some(entry.tool.version.clone()),
                    doc,
                });
            }
        }
    }
    let skipped: BTreeSet<&str> = listing
        .skipped
        .iter()
        .filter_map(|s| s.name.as_deref())
        .chain(plan.refused.iter().map(|r| r.name.as_str()))
        .collect();
    for (name, entry) in &ours {
        if !seen.contains(name) && !skipped.contains(name.as_str()) {
            plan.vanished
                .push(format!("{}@{}", entry.tool.slug, entry.tool.version));
        }
    }
    Ok(plan)
}

/// The server's name of `entry`'s tool, when `entry` is a tool of `server`.
fn server_tool(entry: &ToolEntry, server: &str) -> Option<String> {
    if entry.tool.kind != ToolType::Mcp {
        return None;
    }
    let mcp = entry.tool.mcp_impl()?;
    (mcp.server == server).then_some(mcp.tool)
}

/// The `tool.json` of the server's `tool`.
fn document(server: &str, tool: &Value, slug: &str, version: &str) -> Value {
    let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
    let annotations = tool.get("annotations").filter(|a| a.is_object());
    let title = tool
        .get("title")
        .or_else(|| annotations.and_then(|a| a.get("title")))
        .and_then(Value::as_str)
        .unwrap_or(name);
    let mut doc = Map::new();
    doc.insert("slug".into(), json!(slug));
    doc.insert("version".into(), json!(version));
    doc.insert("displayName".into(), json!(title));
    doc.insert(
        "description".into(),
        tool.get("description")
            .cloned()
            .unwrap_or_else(|| json!("")),
    );
    doc.insert("type".into(), json!("mcp"));
    doc.insert("impl".into(), json!({ "server": server, "tool": name }));
    doc.insert(
        "argSchema".into(),
        tool.get("inputSchema")
            .cloned()
            .unwrap_or_else(|| json!({ "type": "object" })),
    );
    if let Some(output) = tool.get("outputSchema") {
        doc.insert("outputSchema".into(), output.clone());
    }
    if let Some(annotations) = annotations {
        doc.insert("annotations".into(), annotations.clone());
    }
    let hint = |key: &str| {
        annotations
            .and_then(|a| a.get(key))
            .and_then(Value::as_bool)
    };
    let safe = hint("readOnlyHint") == Some(true) || hint("destructiveHint") == Some(false);
    doc.insert("safe".into(), json!(safe));
    doc.insert("tags".into(), json!(["mcp", server]));
    Value::Object(doc)
}

impl Plan {
    /// Move the new tools whose exported names would collide (with a catalog tool's, or a
    /// new tool's listed before) from [`added`](Self::added) to [`refused`](Self::refused),
    /// each naming both tools, the rule and how to import it: the others are imported.
    fn refuse_colliding(
        &mut self,
        catalog: &Catalog,
        bundle_slug: &str,
    ) -> Result<(), CatalogError> {
        let slugs: Vec<&str> = self.added.iter().map(|p| p.slug.as_str()).collect();
        let colliding = catalog.colliding_new_tools(bundle_slug, &slugs)?;
        for (slug, message, others) in colliding {
            let Some(at) = self.added.iter().position(|p| p.slug == slug) else {
                continue;
            };
            let planned = self.added.remove(at);
            // A tool of this server on the other side is named by its name there too.
            let server_names: Vec<String> = others
                .iter()
                .filter_map(|other| {
                    let slug = other.strip_prefix(bundle_slug)?.strip_prefix('/')?;
                    let planned = self.added.iter().find(|p| p.slug == slug)?;
                    Some(format!("{other} is the server's '{}'; ", planned.name))
                })
                .collect();
            let how = if others.is_empty() {
                "to import it, rename it on the server, then import again".to_owned()
            } else if server_names.len() == others.len() {
                "to import it, rename one of the two tools on the server, then import again"
                    .to_owned()
            } else {
                format!(
                    "to import it, rename it on the server, or put {} anew under another slug and delete it, then import again",
                    others.join(" and ")
                )
            };
            self.refused.push(Refused {
                name: planned.name,
                violations: vec![
                    Violation::new(
                        "/slug",
                        format!("{message}; {}{how}", server_names.concat()),
                    )
                    .rule("name-collision"),
                ],
            });
        }
        Ok(())
    }

    /// Whether `tool put` would refuse `doc` (checked with the IDs and timestamps it fills
    /// in): then the tool is noted in [`refused`](Self::refused), with why.
    fn refuses(&mut self, doc: &Value, name: &str) -> bool {
        let mut full = doc.clone();
        let now = jiff::Timestamp::now().to_string();
        full["toolID"] = json!(uuid::Uuid::now_v7());
        full["bundleID"] = json!(uuid::Uuid::now_v7());
        full["createdAt"] = json!(now);
        full["modifiedAt"] = json!(now);
        let mut violations = match model::typed::<Tool>(&full, "") {
            Ok(tool) => tool.check(&full),
            Err(e) => e.violations().to_vec(),
        };
        violations.extend(crate::catalog::store::JsonFile::new(&full).oversized());
        if violations.is_empty() {
            return false;
        }
        self.refused.push(Refused {
            name: name.to_owned(),
            violations,
        });
        true
    }
}

/// A slug from the server's name for a tool (letters and digits kept, anything else a '-'),
/// not yet used in the bundle, in any case: a server's `Echo` beside its `echo` becomes
/// `Echo-2`, since two slug folders that differ only by case are one folder on macOS and
/// Windows (validate's rule `case-collision`, which `tool put` refuses). `taken` holds the
/// bundle's slugs case-folded.
fn free_slug(name: &str, taken: &BTreeSet<String>) -> String {
    let mut base = String::new();
    for c in name.chars() {
        if c.is_alphanumeric() {
            base.push(c);
        } else if !base.ends_with('-') {
            base.push('-');
        }
    }
    let mut base: String = base.trim_matches('-').chars().take(56).collect();
    if base.is_empty()
        || crate::catalog::rules::check_name(crate::catalog::rules::NameKind::Slug, &base).is_err()
    {
        base = "tool".to_owned();
    }
    let free = |slug: &str| !taken.contains(&case_folded(slug));
    if free(&base) {
        return base;
    }
    (2..)
        .map(|n| format!("{base}-{n}"))
        .find(|slug| free(slug))
        .unwrap_or(base)
}

/// The version after the highest numbered version of `slug` in the bundle.
fn next_version(existing: &[ToolEntry], slug: &str) -> String {
    let highest = existing
        .iter()
        .filter(|e| e.tool.slug == slug)
        .filter_map(|e| e.tool.version.parse::<u64>().ok())
        .max()
        .unwrap_or(0);
    (highest + 1).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_come_from_names_and_never_collide() {
        let taken: BTreeSet<String> = ["echo".to_owned(), "get-sum".to_owned()].into();
        // `taken` is case-folded: a slug in any case is taken.
        assert_eq!(free_slug("printEnv", &taken), "printEnv");
        assert_eq!(free_slug("get_sum", &taken), "get-sum-2");
        assert_eq!(free_slug("echo", &taken), "echo-2");
        assert_eq!(free_slug("Echo", &taken), "Echo-2");
        assert_eq!(free_slug("GET_SUM", &taken), "GET-SUM-2");
        assert_eq!(free_slug("__", &taken), "tool");
        assert_eq!(free_slug("a.b/c", &taken), "a-b-c");
    }

    #[test]
    fn safe_follows_the_annotations_and_mcp_defaults() {
        let doc = |annotations: Value| {
            document(
                "s",
                &json!({ "name": "t", "inputSchema": {}, "annotations": annotations }),
                "t",
                "1",
            )
        };
        assert_eq!(doc(json!({ "readOnlyHint": true }))["safe"], true);
        assert_eq!(doc(json!({ "destructiveHint": false }))["safe"], true);
        assert_eq!(doc(json!({}))["safe"], false);
        assert_eq!(
            doc(json!({ "readOnlyHint": false, "destructiveHint": true }))["safe"],
            false
        );
    }
}
