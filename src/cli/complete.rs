//! Shell completion that knows the catalog: clap_complete's dynamic completion (`CompleteEnv`).
//!
//! The shell's script (`toolctl completions SHELL`, or `COMPLETE=SHELL toolctl`) runs
//! `COMPLETE=SHELL toolctl -- WORDS…` at each TAB; [`answer_if_asked`] answers that before
//! anything else runs and exits. Values of closed sets (`--provider`, `--scorer`, …) come from
//! their `ValueEnum`s; tool references, bundles, agents and MCP server names come from the
//! catalog the command line names (`--catalog`, `$TOOLCTL_CATALOG`, else the usual search).
//!
//! Completion only reads: folder names and `bundle.json` files (never a `tool.json`), no index,
//! no lock, no watcher; a missing or broken catalog completes nothing and says nothing.

use crate::cli::Cli;
use clap::CommandFactory;
use clap_complete::engine::{ArgValueCompleter, CompletionCandidate};
use clap_complete::env::{CompleteEnv, Shells};
use std::ffi::{OsStr, OsString};
use std::path::PathBuf;
use std::sync::OnceLock;
use toolctl_lib::attach::agent::{AGENTS_DIR, AgentId};
use toolctl_lib::catalog::{self, BundleEntry, Catalog};

/// The variable that asks toolctl for completions (`COMPLETE=bash toolctl`).
pub const VAR: &str = "COMPLETE";

/// The `--catalog` of the command line being completed, if it names one.
static CATALOG_FLAG: OnceLock<Option<PathBuf>> = OnceLock::new();

/// When the shell asks for completions (`COMPLETE` set), print them (or the registration
/// script) and exit; otherwise return at once.
pub fn answer_if_asked() {
    if std::env::var_os(VAR).is_none_or(|v| v.is_empty() || v == "0") {
        return;
    }
    let args: Vec<OsString> = std::env::args_os().collect();
    let _ = CATALOG_FLAG.set(catalog_flag(&args));
    CompleteEnv::with_factory(Cli::command).var(VAR).complete();
}

/// The value of `--catalog DIR` / `--catalog=DIR` among the words being completed (after
/// `--`), the last one given.
fn catalog_flag(args: &[OsString]) -> Option<PathBuf> {
    let start = args.iter().position(|a| a == "--").map_or(0, |i| i + 1);
    let mut found = None;
    let mut words = args[start..].iter();
    while let Some(word) = words.next() {
        if word == "--catalog" {
            found = words.next().map(PathBuf::from);
        } else if let Some(dir) = word.to_str().and_then(|w| w.strip_prefix("--catalog=")) {
            found = Some(PathBuf::from(dir));
        }
    }
    found.filter(|dir| !dir.as_os_str().is_empty())
}

/// The script a shell sources to complete `toolctl` (the program run at each TAB is the
/// `toolctl` found on PATH), in `shell`'s language.
pub fn registration(shell: clap_complete::Shell) -> String {
    let name = shell.to_string();
    let mut bytes = Vec::new();
    if let Some(completer) = Shells::builtins().completer(&name) {
        let _ = completer.write_registration(VAR, "toolctl", "toolctl", "toolctl", &mut bytes);
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The catalog the command line being completed would use, opened only to read.
fn open_catalog() -> Option<Catalog> {
    let cwd = std::env::current_dir().ok()?;
    let explicit = CATALOG_FLAG.get().cloned().flatten().or_else(|| {
        std::env::var_os("TOOLCTL_CATALOG")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    });
    let location =
        catalog::locate(explicit.as_deref(), &cwd, |name| std::env::var(name).ok()).ok()?;
    Catalog::open(location.path()).ok()
}

/// Every bundle (the built-in one first), soft-deleted ones with `deleted` only.
fn list_bundles(catalog: &Catalog, deleted: bool) -> Vec<BundleEntry> {
    let Ok(scan) = catalog.bundles() else {
        return Vec::new();
    };
    scan.items
        .into_iter()
        .filter(|b| deleted || !b.is_deleted())
        .collect()
}

/// The versions of tool `slug` in `bundle`: folder names (the built-in bundle's from the binary).
fn versions(catalog: &Catalog, bundle: &BundleEntry, slug: &str) -> Vec<String> {
    match &bundle.dir {
        Some(dir) => {
            let mut names = catalog::list_dir_names(&dir.join(catalog::TOOLS_DIR).join(slug));
            names.sort();
            names
        }
        None => catalog
            .bundle_tools(bundle, &mut Vec::new())
            .into_iter()
            .filter(|t| t.tool.slug == slug)
            .map(|t| t.tool.version)
            .collect(),
    }
}

/// A bundle's one-line description for the shells that show one (zsh, fish).
fn bundle_help(bundle: &BundleEntry) -> Option<clap::builder::StyledStr> {
    let text = [&bundle.bundle.display_name, &bundle.bundle.description]
        .into_iter()
        .find(|t| !t.trim().is_empty())?;
    Some(text.lines().next().unwrap_or_default().to_owned().into())
}

/// Candidates for a tool reference as the command line takes it: `bundle/` then
/// `bundle/slug`, a bare `slug`, and after `@` the versions (`bundle/slug@v1`, `slug@v1`).
pub fn tool_candidates(current: &OsStr) -> Vec<CompletionCandidate> {
    let Some(current) = current.to_str() else {
        return Vec::new();
    };
    let Some(catalog) = open_catalog() else {
        return Vec::new();
    };
    let bundles = list_bundles(&catalog, false);
    let mut out: Vec<CompletionCandidate> = Vec::new();
    if let Some((base, version)) = current.split_once('@') {
        let (bundle, slug) = match base.split_once('/') {
            Some((bundle, slug)) => (Some(bundle), slug),
            None => (None, base),
        };
        let mut seen = Vec::new();
        for entry in &bundles {
            if bundle.is_some_and(|b| b != entry.bundle.slug) {
                continue;
            }
            for v in versions(&catalog, entry, slug) {
                if v.starts_with(version) && !seen.contains(&v) {
                    out.push(CompletionCandidate::new(format!("{base}@{v}")));
                    seen.push(v);
                }
            }
        }
    } else if let Some((bundle, slug)) = current.split_once('/') {
        for entry in bundles.iter().filter(|b| b.bundle.slug == bundle) {
            for name in catalog.tool_slugs(entry) {
                if name.starts_with(slug) {
                    out.push(CompletionCandidate::new(format!("{bundle}/{name}")));
                }
            }
        }
    } else {
        for entry in &bundles {
            if entry.bundle.slug.starts_with(current) {
                out.push(
                    CompletionCandidate::new(format!("{}/", entry.bundle.slug))
                        .help(bundle_help(entry)),
                );
            }
        }
        // Bare slugs only once something is typed: all of them at once is a wall of names.
        if !current.is_empty() {
            let mut slugs: Vec<String> = bundles
                .iter()
                .flat_map(|b| catalog.tool_slugs(b))
                .filter(|s| s.starts_with(current))
                .collect();
            slugs.sort();
            slugs.dedup();
            out.extend(slugs.into_iter().map(CompletionCandidate::new));
        }
    }
    out
}

/// Candidates for a bundle: its slug, soft-deleted bundles included (`bundle restore`).
pub fn bundle_candidates(current: &OsStr) -> Vec<CompletionCandidate> {
    let (Some(current), Some(catalog)) = (current.to_str(), open_catalog()) else {
        return Vec::new();
    };
    list_bundles(&catalog, true)
        .iter()
        .filter(|b| b.bundle.slug.starts_with(current))
        .map(|b| CompletionCandidate::new(&b.bundle.slug).help(bundle_help(b)))
        .collect()
}

/// Candidates for an agent: the IDs of the catalog's agent files (`agent-<uuid>`).
pub fn agent_candidates(current: &OsStr) -> Vec<CompletionCandidate> {
    let (Some(current), Some(catalog)) = (current.to_str(), open_catalog()) else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(catalog.root().join(AGENTS_DIR)) else {
        return Vec::new();
    };
    let mut ids: Vec<String> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name();
            let stem = name.to_str()?.strip_suffix(".json")?;
            let id = AgentId::parse(stem).ok()?.to_string();
            (id == stem && id.starts_with(current)).then_some(id)
        })
        .collect();
    ids.sort();
    ids.into_iter().map(CompletionCandidate::new).collect()
}

/// Candidates for an MCP server: the names under `mcpServers` of `toolctl.json`.
pub fn server_candidates(current: &OsStr) -> Vec<CompletionCandidate> {
    let (Some(current), Some(catalog)) = (current.to_str(), open_catalog()) else {
        return Vec::new();
    };
    catalog
        .config()
        .mcp_servers
        .keys()
        .filter(|name| name.starts_with(current))
        .map(CompletionCandidate::new)
        .collect()
}

/// `#[arg(add = complete::tools())]`: complete a tool reference from the catalog.
pub fn tools() -> ArgValueCompleter {
    ArgValueCompleter::new(tool_candidates)
}

/// `#[arg(add = complete::bundles())]`: complete a bundle from the catalog.
pub fn bundles() -> ArgValueCompleter {
    ArgValueCompleter::new(bundle_candidates)
}

/// `#[arg(add = complete::agents())]`: complete an agent ID from the catalog.
pub fn agents() -> ArgValueCompleter {
    ArgValueCompleter::new(agent_candidates)
}

/// `#[arg(add = complete::servers())]`: complete an MCP server of `toolctl.json`.
pub fn servers() -> ArgValueCompleter {
    ArgValueCompleter::new(server_candidates)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalog_flag_is_read_from_the_words_being_completed() {
        let words = |w: &[&str]| w.iter().map(OsString::from).collect::<Vec<_>>();
        assert_eq!(
            catalog_flag(&words(&[
                "toolctl",
                "--",
                "toolctl",
                "--catalog",
                "/c",
                "tool",
                "get"
            ])),
            Some(PathBuf::from("/c"))
        );
        assert_eq!(
            catalog_flag(&words(&[
                "toolctl",
                "--",
                "toolctl",
                "--catalog=/d",
                "invoke",
                ""
            ])),
            Some(PathBuf::from("/d"))
        );
        assert_eq!(
            catalog_flag(&words(&["toolctl", "--", "toolctl", "invoke", "--catalog"])),
            None
        );
    }
}
