//! The catalog: bundles and tools stored as plain JSON files in a folder people keep in git.
//!
//! ```text
//! <catalog>/toolctl.json
//! <catalog>/bundles/<bundleID>/bundle.json
//! <catalog>/bundles/<bundleID>/tools/<slug>/<version>/tool.json
//! <catalog>/.toolctl/            derived state (lock, later the index), safe to delete
//! ```
//!
//! The files are the truth and are read as they are on disk every time, so hand edits and
//! `git pull` need no extra step. A file that cannot be read or breaks the rules is reported
//! as a [`Problem`] with its path while the rest of the catalog keeps working.

pub mod auth;
pub mod builtin;
pub mod config;
pub mod error;
pub mod fill;
pub mod lock;
pub mod mcp_servers;
pub mod model;
pub mod names;
pub mod page;
mod resolve;
pub mod rules;
pub mod schemas;
pub mod skeleton;
pub mod state;
pub mod store;
pub mod templates;
pub mod tool_rules;
pub mod view;

pub use config::{CONFIG_FILE, Config};
pub use error::{Error, GivenBundle, Hint, Result, Violation};
#[cfg(test)]
pub(crate) use resolve::match_bundle;
pub use resolve::unreadable_bundle_hint;
pub use resolve::{ToolRef, VersionChoice, default_version_key};

use model::{Bundle, Tool};
use serde::Serialize;
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The folder of derived state inside a catalog.
pub const STATE_DIR: &str = ".toolctl";
/// The catalog's folder of bundles, each bundle's folder of tools, and the files that define
/// them: `bundles/<bundleID>/bundle.json`, `bundles/<bundleID>/tools/<slug>/<version>/tool.json`.
pub const BUNDLES_DIR: &str = "bundles";
pub const TOOLS_DIR: &str = "tools";
pub const BUNDLE_FILE: &str = "bundle.json";
pub const TOOL_FILE: &str = "tool.json";

/// The bundle folder, slug folder and version folder of a tool file's path relative to the
/// catalog (`bundles/<dir>/tools/<slug>/<version>/tool.json`), `None` for any other path. The
/// one place that layout is read back; [`tool_path`] writes it.
pub fn parse_tool_path(path: &str) -> Option<(&str, &str, &str)> {
    let mut parts = path.split('/');
    match [(); 6].map(|()| parts.next()) {
        [
            Some(BUNDLES_DIR),
            Some(dir),
            Some(TOOLS_DIR),
            Some(slug),
            Some(version),
            Some(TOOL_FILE),
        ] if parts.next().is_none() => Some((dir, slug, version)),
        _ => None,
    }
}

/// The path of a tool file relative to the catalog: `bundles/<dir>/tools/<slug>/<version>/tool.json`.
pub fn tool_path(dir: &str, slug: &str, version: &str) -> String {
    format!("{BUNDLES_DIR}/{dir}/{TOOLS_DIR}/{slug}/{version}/{TOOL_FILE}")
}

/// Default time to wait for the write lock.
pub const DEFAULT_LOCK_TIMEOUT: Duration = Duration::from_secs(10);

/// A file the catalog could not use, and why. Reported, never fatal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    pub path: PathBuf,
    pub message: String,
}

/// Items read from disk plus the problems met on the way.
#[derive(Debug)]
pub struct Scan<T> {
    pub items: Vec<T>,
    pub problems: Vec<Problem>,
}

/// A bundle as found in the catalog.
#[derive(Debug, Clone)]
pub struct BundleEntry {
    pub bundle: Bundle,
    pub doc: Value,
    /// The bundle's folder; `None` for the built-in bundle.
    pub dir: Option<PathBuf>,
    /// The effective enabled flag (for the built-in bundle, from `toolctl.json`).
    pub is_enabled: bool,
}

impl BundleEntry {
    pub fn is_builtin(&self) -> bool {
        self.dir.is_none()
    }

    pub fn is_deleted(&self) -> bool {
        self.bundle.soft_deleted_at.is_some()
    }

    /// `bundle.json`'s path; `None` for the built-in bundle.
    pub fn file(&self) -> Option<PathBuf> {
        self.dir.as_ref().map(|d| d.join(BUNDLE_FILE))
    }
}

/// A tool as found in the catalog, with the state of its bundle.
#[derive(Debug, Clone)]
pub struct ToolEntry {
    pub tool: Tool,
    pub doc: Value,
    /// `tool.json`'s path; `None` for built-in tools.
    pub path: Option<PathBuf>,
    pub bundle_slug: String,
    pub bundle_enabled: bool,
    pub bundle_deleted: bool,
    /// The tool's own effective enabled flag (built-ins: from `toolctl.json`).
    pub is_enabled: bool,
    /// Why this binary cannot use the tool, if it cannot.
    pub unavailable: Option<String>,
}

impl ToolEntry {
    /// `bundle/slug@version`.
    pub fn reference(&self) -> String {
        format!(
            "{}/{}@{}",
            self.bundle_slug, self.tool.slug, self.tool.version
        )
    }

    pub fn is_builtin(&self) -> bool {
        self.path.is_none()
    }

    /// The file's path as the index keeps it: relative to the catalog `root`, `/` between its
    /// parts (`bundles/<dir>/tools/<slug>/<version>/tool.json`); `builtin:<slug>` for a built-in
    /// tool.
    pub fn catalog_path(&self, root: &Path) -> String {
        match &self.path {
            None => format!("builtin:{}", self.tool.slug),
            Some(path) => path
                .strip_prefix(root)
                .unwrap_or(path)
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/"),
        }
    }

    /// Enabled itself and in an enabled, live bundle.
    pub fn is_effectively_enabled(&self) -> bool {
        self.is_enabled && self.bundle_enabled && !self.bundle_deleted
    }

    /// One word (or a reason) for tables: `enabled`, `disabled`, `bundle disabled`,
    /// `bundle deleted`, `unavailable: …`.
    pub fn status(&self) -> String {
        if self.bundle_deleted {
            "bundle deleted".to_owned()
        } else if !self.bundle_enabled {
            "bundle disabled".to_owned()
        } else if !self.is_enabled {
            "disabled".to_owned()
        } else if let Some(reason) = &self.unavailable {
            format!("unavailable: {reason}")
        } else {
            "enabled".to_owned()
        }
    }

    /// The order of tool lists, without allocating.
    pub(crate) fn order(&self) -> (&str, &str, &str) {
        (&self.bundle_slug, &self.tool.slug, &self.tool.version)
    }
}

/// Filters of `tool list`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ToolFilter {
    /// Bundles by slug or ID; any of them (empty: all).
    pub bundles: Vec<String>,
    /// Tags the tool must all have.
    pub tags: Vec<String>,
    /// Also disabled tools and tools of disabled bundles.
    pub include_disabled: bool,
    /// Also tools of soft-deleted bundles.
    pub include_deleted: bool,
}

/// Filters of `bundle list`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct BundleFilter {
    pub bundles: Vec<String>,
    pub include_disabled: bool,
    pub include_deleted: bool,
}

/// One page of a list.
#[derive(Debug)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub next_page_token: Option<String>,
    pub problems: Vec<Problem>,
}

/// Where the catalog is, and which rule found it (the first that applies, in this order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// `--catalog DIR` or `$TOOLCTL_CATALOG`.
    Explicit(PathBuf),
    /// The nearest ancestor of the working folder holding `toolctl.json`.
    Ancestor(PathBuf),
    /// `$XDG_DATA_HOME/toolctl`, or `~/.local/share/toolctl`.
    UserDefault(PathBuf),
}

impl Location {
    pub fn path(&self) -> &Path {
        match self {
            Self::Explicit(p) | Self::Ancestor(p) | Self::UserDefault(p) => p,
        }
    }
}

/// Find the catalog: the explicit folder if given, else the nearest ancestor of `cwd` holding
/// `toolctl.json`, else the user's default (`$XDG_DATA_HOME/toolctl` or
/// `$HOME/.local/share/toolctl`). `env` reads environment variables.
pub fn locate(
    explicit: Option<&Path>,
    cwd: &Path,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Location> {
    if let Some(dir) = explicit {
        return Ok(Location::Explicit(absolute(cwd, dir)));
    }
    // Any toolctl.json (a FIFO or a folder too, refused by name when read), not only a regular
    // file: a catalog whose file cannot be read is named as such, never passed over.
    if let Some(found) = cwd.ancestors().find(|d| d.join(CONFIG_FILE).exists()) {
        return Ok(Location::Ancestor(found.to_owned()));
    }
    let non_empty = |name: &str| env(name).filter(|v| !v.is_empty());
    if let Some(data) = non_empty("XDG_DATA_HOME") {
        return Ok(Location::UserDefault(PathBuf::from(data).join("toolctl")));
    }
    match non_empty("HOME") {
        Some(home) => Ok(Location::UserDefault(
            PathBuf::from(home).join(".local/share/toolctl"),
        )),
        None => Err(Error::Config {
            message: "no catalog: no toolctl.json above the working folder, and neither XDG_DATA_HOME nor HOME is set".to_owned(),
            hint: Some(Hint::NameCatalog),
        }),
    }
}

/// `dir` from `cwd`, without `.` components (`--catalog .` is the folder itself, not
/// `<cwd>/.`, in every path a command prints); `..` stays, as a symlink may stand before it.
fn absolute(cwd: &Path, dir: &Path) -> PathBuf {
    cwd.join(dir).components().collect()
}

/// An open catalog.
#[derive(Debug)]
pub struct Catalog {
    pub(crate) root: PathBuf,
    pub(crate) config: Config,
    pub(crate) lock_timeout: Duration,
    check_note: CheckNote,
}

/// What the index's change checks of a catalog met in this process, for whoever opened it: the
/// command line starts a watcher after a check that had to walk the catalog (see
/// `index::watch`), and says when the index could only be kept in memory. Clones share one
/// note.
#[derive(Debug, Clone, Default)]
pub struct CheckNote(std::sync::Arc<std::sync::Mutex<Checks>>);

#[derive(Debug, Default)]
struct Checks {
    walk: Option<usize>,
    /// Why the index was built in memory.
    in_memory: Option<String>,
    /// Where the index was kept in the cache folder, and why.
    in_cache: Option<(PathBuf, String)>,
    /// State files made again, each once, with why.
    remade: Vec<(PathBuf, String)>,
}

impl CheckNote {
    fn note(&self) -> std::sync::MutexGuard<'_, Checks> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A check had to stat `entries` entries: no watcher answered for it.
    pub fn walked(&self, entries: usize) {
        let mut note = self.note();
        note.walk = Some(note.walk.map_or(entries, |seen| seen.max(entries)));
    }

    /// The most entries a check had to stat since the last call, if one had to.
    pub fn take_walk(&self) -> Option<usize> {
        self.note().walk.take()
    }

    /// The catalog's index could not be kept in it (`why`: a read-only mount, another user's
    /// tree, a `.toolctl` that is a file or a symlink out of the catalog), nor in the cache
    /// folder: it was built in memory.
    pub fn index_in_memory(&self, why: &str) {
        self.note().in_memory = Some(why.to_owned());
    }

    /// Why an index was built in memory since the last call, if one was.
    pub fn take_in_memory(&self) -> Option<String> {
        self.note().in_memory.take()
    }

    /// The catalog's index could not be kept in it (`why`, as for
    /// [`index_in_memory`](Self::index_in_memory)): it is kept in the user's cache folder, at
    /// `index`.
    pub fn index_in_cache(&self, index: &Path, why: &str) {
        self.note().in_cache = Some((index.to_owned(), why.to_owned()));
    }

    /// Where an index was kept in the cache folder since the last call, and why, if one was.
    pub fn take_in_cache(&self) -> Option<(PathBuf, String)> {
        self.note().in_cache.take()
    }

    /// State kept at `path` could not be used (`why`: damaged, not a database) and was made
    /// again. Told once per file.
    pub fn state_remade(&self, path: &Path, why: &str) {
        let mut note = self.note();
        if !note.remade.iter().any(|(p, _)| p == path) {
            note.remade.push((path.to_owned(), why.to_owned()));
        }
    }

    /// The state files made again since the last call, with why.
    pub fn take_remade(&self) -> Vec<(PathBuf, String)> {
        std::mem::take(&mut self.note().remade)
    }
}

impl Catalog {
    /// Open the catalog in `root`. A folder that does not exist yet is an empty catalog; it is
    /// created on the first write.
    pub fn open(root: impl Into<PathBuf>) -> Result<Self> {
        Self::open_with(root.into(), Config::load)
    }

    fn open_with(root: PathBuf, load: fn(&Path) -> Result<Config>) -> Result<Self> {
        store::confine(&root);
        let config = load(&root)?;
        Ok(Self {
            root,
            config,
            lock_timeout: DEFAULT_LOCK_TIMEOUT,
            check_note: CheckNote::default(),
        })
    }

    /// Open the catalog in `root` with its `toolctl.json` as it is, even when toolctl's rules
    /// refuse it ([`Config::load_as_is`]): for the `config` commands that show and repair it,
    /// and for nothing else, as the settings of such a catalog are the defaults.
    pub fn open_as_is(root: impl Into<PathBuf>) -> Result<Self> {
        Self::open_with(root.into(), Config::load_as_is)
    }

    /// How long writes wait for the catalog lock.
    pub fn with_lock_timeout(mut self, timeout: Duration) -> Self {
        self.lock_timeout = timeout;
        self
    }

    /// Share `note` with this catalog's index checks.
    pub fn with_check_note(mut self, note: CheckNote) -> Self {
        self.check_note = note;
        self
    }

    /// Where index checks of this catalog note what they met.
    pub fn check_note(&self) -> &CheckNote {
        &self.check_note
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Whether the catalog exists on disk (has its `toolctl.json`).
    pub fn exists(&self) -> bool {
        self.root.join(CONFIG_FILE).is_file()
    }

    pub(crate) fn bundles_dir(&self) -> PathBuf {
        self.root.join(BUNDLES_DIR)
    }

    pub(crate) fn lock_path(&self) -> PathBuf {
        self.root.join(STATE_DIR).join("lock")
    }

    /// The built-in bundle with its flags from `toolctl.json`.
    pub(crate) fn builtin_bundle(&self) -> BundleEntry {
        let b = builtin::bundle();
        BundleEntry {
            bundle: b.view.clone(),
            doc: b.doc.clone(),
            dir: None,
            is_enabled: self.config.builtin_bundle_enabled(),
        }
    }

    /// Every bundle: the built-in one first, then the folders under `bundles/` in slug order.
    /// Soft-deleted bundles are included; callers filter.
    pub fn bundles(&self) -> Result<Scan<BundleEntry>> {
        let mut items = vec![self.builtin_bundle()];
        let mut problems = Vec::new();
        let dir = self.bundles_dir();
        if let Some(problem) = not_a_folder(&dir) {
            problems.push(problem);
            return Ok(Scan { items, problems });
        }
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Scan { items, problems });
            }
            Err(e) => return Err(Error::io("cannot read", dir, e)),
        };
        for entry in entries {
            let entry = entry.map_err(|e| Error::io("cannot read", &dir, e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') || !entry.path().is_dir() {
                continue;
            }
            match self.load_bundle(&entry.path(), &name) {
                Ok(Some(bundle)) => items.push(bundle),
                Ok(None) => {}
                Err(problem) => problems.push(problem),
            }
        }
        items[1..].sort_by(|a, b| a.bundle.slug.cmp(&b.bundle.slug));
        Ok(Scan { items, problems })
    }

    /// Read `bundles/<name>/bundle.json`. A folder without one that is empty or holds only
    /// hidden files (left by a crash before the first write) is skipped silently.
    pub(crate) fn load_bundle(
        &self,
        dir: &Path,
        name: &str,
    ) -> Result<Option<BundleEntry>, Problem> {
        let path = dir.join(BUNDLE_FILE);
        let problem = |message: String| Problem {
            path: path.clone(),
            message,
        };
        let text = match crate::base::capped::read_text(&path, Some(&self.root)) {
            Ok(text) => text,
            Err(crate::base::capped::ReadError::Missing) => {
                return if is_leftover_dir(dir) {
                    Ok(None)
                } else {
                    Err(problem("the bundle folder has no bundle.json".to_owned()))
                };
            }
            Err(e) => return Err(problem(e.to_string())),
        };
        let doc = model::parse_doc(&text, &path).map_err(|e| problem(e.reason()))?;
        let bundle: Bundle =
            model::typed(&doc, &path.display().to_string()).map_err(|e| problem(e.reason()))?;
        if bundle.bundle_id.to_string() != name {
            return Err(problem(format!(
                "bundleID {} does not match its folder name '{name}'",
                bundle.bundle_id
            )));
        }
        if let Some(violation) = bundle.check(&doc).first() {
            return Err(problem(violation.to_string()));
        }
        Ok(Some(BundleEntry {
            is_enabled: bundle.is_enabled,
            bundle,
            doc,
            dir: Some(dir.to_owned()),
        }))
    }

    /// The built-in tools with their flags from `toolctl.json`.
    pub(crate) fn builtin_tools(&self, bundle: &BundleEntry) -> Vec<ToolEntry> {
        builtin::tools()
            .iter()
            .map(|t| ToolEntry {
                is_enabled: self
                    .config
                    .builtin_tool_enabled(&t.view.slug)
                    .unwrap_or(t.view.is_enabled),
                unavailable: t.view.unavailable_reason(&self.config),
                tool: t.view.clone(),
                doc: t.doc.clone(),
                path: None,
                bundle_slug: bundle.bundle.slug.clone(),
                bundle_enabled: bundle.is_enabled,
                bundle_deleted: false,
            })
            .collect()
    }

    /// The slugs of a bundle's tools (folder names), sorted.
    pub fn tool_slugs(&self, bundle: &BundleEntry) -> Vec<String> {
        if bundle.is_builtin() {
            return builtin::tools()
                .iter()
                .map(|t| t.view.slug.clone())
                .collect();
        }
        let Some(dir) = &bundle.dir else {
            return Vec::new();
        };
        let mut slugs = list_dir_names(&dir.join(TOOLS_DIR));
        slugs.sort();
        slugs
    }

    /// Every version of one tool slug in a bundle, sorted by version.
    pub(crate) fn tool_versions(
        &self,
        bundle: &BundleEntry,
        slug: &str,
        problems: &mut Vec<Problem>,
    ) -> Vec<ToolEntry> {
        let Some(dir) = &bundle.dir else {
            return self
                .builtin_tools(bundle)
                .into_iter()
                .filter(|t| t.tool.slug == slug)
                .collect();
        };
        let slug_dir = dir.join(TOOLS_DIR).join(slug);
        let mut versions = list_dir_names(&slug_dir);
        versions.sort();
        versions
            .into_iter()
            .filter_map(|version| {
                match self.load_tool(
                    bundle,
                    slug,
                    &version,
                    &slug_dir.join(&version).join(TOOL_FILE),
                    false,
                ) {
                    Ok(tool) => tool,
                    Err(problem) => {
                        problems.push(problem);
                        None
                    }
                }
            })
            .collect()
    }

    /// Every tool of a bundle, sorted by slug then version.
    pub fn bundle_tools(
        &self,
        bundle: &BundleEntry,
        problems: &mut Vec<Problem>,
    ) -> Vec<ToolEntry> {
        if bundle.is_builtin() {
            let mut tools = self.builtin_tools(bundle);
            tools.sort_by(|a, b| a.order().cmp(&b.order()));
            return tools;
        }
        if let Some(problem) = bundle
            .dir
            .as_deref()
            .and_then(|dir| not_a_folder(&dir.join(TOOLS_DIR)))
        {
            problems.push(problem);
        }
        self.tool_slugs(bundle)
            .iter()
            .flat_map(|slug| self.tool_versions(bundle, slug, problems))
            .collect()
    }

    /// Read one `tool.json` (`usable`: see [`Self::tool_from_text`]). A version folder
    /// without one (left by a crash before the first write) is skipped silently.
    pub(crate) fn load_tool(
        &self,
        bundle: &BundleEntry,
        slug: &str,
        version: &str,
        path: &Path,
        usable: bool,
    ) -> Result<Option<ToolEntry>, Problem> {
        match read_tool_text(path, &self.root)? {
            Some(text) => self
                .tool_from_text(bundle, slug, version, path, &text, usable)
                .map(Some),
            None => Ok(None),
        }
    }

    /// A tool from the text of its `tool.json` at `path`, checked against its folders
    /// (`usable`: a tool the index lists as usable, [`ToolReader::of_usable`]).
    pub(crate) fn tool_from_text(
        &self,
        bundle: &BundleEntry,
        slug: &str,
        version: &str,
        path: &Path,
        text: &str,
        usable: bool,
    ) -> Result<ToolEntry, Problem> {
        let problem = |message: String| Problem {
            path: path.to_owned(),
            message,
        };
        let doc = model::parse_doc(text, path).map_err(|e| problem(e.reason()))?;
        let tool: Tool =
            model::typed(&doc, &path.display().to_string()).map_err(|e| problem(e.reason()))?;
        let mismatch = if tool.bundle_id != bundle.bundle.bundle_id {
            Some(format!(
                "bundleID {} does not match its bundle folder {}",
                tool.bundle_id, bundle.bundle.bundle_id
            ))
        } else if tool.slug != slug {
            Some(format!(
                "slug '{}' does not match its folder '{slug}'",
                tool.slug
            ))
        } else if tool.version != version {
            Some(format!(
                "version '{}' does not match its folder '{version}'",
                tool.version
            ))
        } else if tool.is_built_in {
            Some("isBuiltIn: true is reserved for tools compiled into toolctl".to_owned())
        } else {
            None
        };
        if let Some(message) = mismatch {
            return Err(problem(message));
        }
        for (kind, name) in [
            (rules::NameKind::Slug, slug),
            (rules::NameKind::Version, version),
        ] {
            if let Err(message) = rules::check_name(kind, name) {
                return Err(problem(message));
            }
        }
        let violations = if usable {
            tool.check_listed(&doc)
        } else {
            tool.check(&doc)
        };
        let unavailable = match violations.first() {
            Some(violation) => Some(violation.to_string()),
            None => tool.unavailable_reason(&self.config),
        };
        Ok(ToolEntry {
            is_enabled: tool.is_enabled,
            tool,
            doc,
            path: Some(path.to_owned()),
            bundle_slug: bundle.bundle.slug.clone(),
            bundle_enabled: bundle.is_enabled,
            bundle_deleted: bundle.is_deleted(),
            unavailable,
        })
    }

    /// The tool stored at `path` relative to the catalog (as the index names it:
    /// `bundles/<id>/tools/<slug>/<version>/tool.json`, or `builtin:<slug>`).
    pub fn tool_at(&self, path: &str) -> Result<Option<ToolEntry>, Problem> {
        self.tool_reader().tool_at(path)
    }

    /// A reader of several tools by path, for one view (a page, a pick).
    pub fn tool_reader(&self) -> ToolReader<'_> {
        ToolReader {
            catalog: self,
            bundles: HashMap::new(),
            usable: false,
        }
    }

    /// Every tool of every bundle (soft-deleted bundles included), in list order.
    pub fn all_tools(&self) -> Result<Scan<ToolEntry>> {
        let Scan {
            items: bundles,
            mut problems,
        } = self.bundles()?;
        let mut items = Vec::new();
        for bundle in &bundles {
            items.extend(self.bundle_tools(bundle, &mut problems));
        }
        items.sort_by(|a, b| a.order().cmp(&b.order()));
        Ok(Scan { items, problems })
    }
}

/// Names of the visible sub-folders of `dir` (none if it does not exist).
pub fn list_dir_names(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    // The entry's type comes with the listing (no `stat` per entry, which costs milliseconds
    // in a bundle of thousands of tools); only a symlink is followed, as `is_dir` would.
    entries
        .filter_map(|e| e.ok())
        .filter(|e| match e.file_type() {
            Ok(kind) if kind.is_symlink() => e.path().is_dir(),
            Ok(kind) => kind.is_dir(),
            Err(_) => e.path().is_dir(),
        })
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| !name.starts_with('.'))
        .collect()
}

/// The problem of `path`, where the catalog needs a folder (`bundles`, a bundle's `tools`),
/// when something else is there: readers see nothing in it, so they say so instead of showing a
/// catalog with less in it (`validate` reports it under rule `folder`). `None` when it is a
/// folder (or a symlink to one) or nothing is there (a catalog without bundles yet).
pub fn not_a_folder(path: &Path) -> Option<Problem> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if path.is_dir() {
        return None;
    }
    let what = if meta.file_type().is_symlink() {
        "a symlink to no folder"
    } else if meta.is_file() {
        "a file (git checks a symlink out as one where core.symlinks is false)"
    } else {
        "not a folder"
    };
    Some(Problem {
        path: path.to_owned(),
        message: format!("must be a folder of the catalog, and is {what}: nothing in it is read"),
    })
}

/// A folder that is empty or holds only hidden entries (temporary files): what a writer killed
/// before its rename leaves (older toolctl versions wrote `bundle.json` into its final folder).
/// Not a bundle and not a problem, for every reader (`validate` included).
pub fn is_leftover_dir(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries
            .flatten()
            .all(|e| e.file_name().to_string_lossy().starts_with('.'))
    })
}

/// An input file's text (`tool put FILE`, `--args-file`, …), read by
/// [`crate::base::capped`]; every refusal is an error naming the file ([`Error::unreadable`]).
pub fn read_input(path: &Path) -> Result<String> {
    crate::base::capped::read_text(path, None).map_err(|e| Error::unreadable(path, e))
}

/// Standard input's text, at most [`crate::base::capped::MAX_FILE_BYTES`].
pub fn read_stdin() -> Result<String> {
    crate::base::capped::read_stdin().map_err(|e| Error::unreadable(Path::new("<stdin>"), e))
}

/// The text of a `tool.json` of the catalog at `root`; `None` when there is no such file.
/// A file that is not a regular file, leaves the catalog, is too large or is not UTF-8 is a
/// problem ([`crate::base::capped`]).
pub(crate) fn read_tool_text(path: &Path, root: &Path) -> Result<Option<String>, Problem> {
    match crate::base::capped::read_text(path, Some(root)) {
        Ok(text) => Ok(Some(text)),
        Err(crate::base::capped::ReadError::Missing) => Ok(None),
        Err(e) => Err(Problem {
            path: path.to_owned(),
            message: e.to_string(),
        }),
    }
}

/// Reads tools by path ([`Catalog::tool_at`]) and each bundle's `bundle.json` once: a page of
/// fifty tools of one bundle reads it once, not fifty times. Made for one view and dropped, so
/// a `bundle.json` written since is read again by the next.
#[derive(Debug)]
pub struct ToolReader<'a> {
    catalog: &'a Catalog,
    /// By bundle folder.
    bundles: HashMap<String, Result<Option<BundleEntry>, Problem>>,
    /// The tools read are ones the index lists as usable now ([`Self::of_usable`]).
    usable: bool,
}

impl ToolReader<'_> {
    /// For tools the index lists as usable now (its change check ran for this command, or its
    /// watcher vouches for it), read again only to be shown (`search`'s page): their JSON
    /// Schemas were checked when the index read these files and are not compiled again
    /// ([`Tool::check_listed`]); every other rule still applies.
    pub fn of_usable(mut self) -> Self {
        self.usable = true;
        self
    }

    /// See [`Catalog::tool_at`].
    pub fn tool_at(&mut self, path: &str) -> Result<Option<ToolEntry>, Problem> {
        let catalog = self.catalog;
        if let Some(slug) = path.strip_prefix("builtin:") {
            let bundle = catalog.builtin_bundle();
            return Ok(catalog
                .builtin_tools(&bundle)
                .into_iter()
                .find(|t| t.tool.slug == slug));
        }
        let Some((dir, slug, version)) = parse_tool_path(path) else {
            return Ok(None);
        };
        let bundle = self
            .bundles
            .entry((*dir).to_owned())
            .or_insert_with(|| catalog.load_bundle(&catalog.bundles_dir().join(dir), dir));
        match bundle {
            Ok(Some(bundle)) => {
                let path = catalog.root.join(path);
                catalog.load_tool(bundle, slug, version, &path, self.usable)
            }
            Ok(None) => Ok(None),
            Err(problem) => Err(problem.clone()),
        }
    }
}
