//! Keeping the index in step with the files, cheaply.
//!
//! Every file and folder the index knows carries a stamp (mtime with nanoseconds, size,
//! inode). A sync compares stamps and reads again only what moved:
//!
//! - `bundles/` changed → list it: bundles added or removed (`rm -r`, `git pull`);
//! - a `bundle.json` changed → read it; a bundle's `tools/` changed → list it: slugs added or
//!   removed; a slug folder changed → list it: versions added or removed;
//! - a `tool.json` changed (edited in place, replaced by a rename, removed) → read it.
//!
//! So unchanged files are never read and unchanged folders never listed; the cost of a sync
//! with nothing to do is one `stat` per tool, slug folder and bundle — unless the catalog's
//! watcher (see [`super::watch`]) says which paths changed since the index's token: then only
//! the rows of those paths and their folders are compared ([`scopes_of`]). The main thread
//! reads the stored stamps (bundles, slug folders, then tool files, a chunk of rows per query)
//! and hands them to stat workers a batch at a time, which compare them with the files' while
//! it reads on; only what moved comes back, and only the main thread writes. Tool files that
//! moved are read and parsed on loader threads, a batch at a time, while the main thread writes
//! what the batch before held ([`Loader`]). Problems (a file that does not parse, …) are stored
//! with the row and reported by every command that reads it.
//!
//! Racy stamps (git's "racily clean" files): a file changed again within the filesystem's
//! timestamp granularity (1 s on some filesystems, a kernel tick on Linux before 6.13), or
//! dated in the future, can keep its stamp across an edit of the same size. So a stamp whose
//! mtime is less than [`RACY_WINDOW`] before the check is marked racy (a trailing `~`) and is
//! not trusted: the next check lists a racy folder again and reads a racy `tool.json` again.
//! Every `tool.json` read is compared by its SHA-256 with the one stored when it was indexed:
//! an unchanged text is not parsed again (and not counted as read), so touching every file of
//! a catalog (a checkout, `touch`, a copy that keeps the bytes) costs a read and a hash each.
//!
//! The parts: [`stamp`] (change stamps), [`pool`] (the stat workers), [`loader`] (the loader
//! threads) and [`write`] (the rows written); this module runs the check in one transaction,
//! and only its thread writes. The tests are in `sync/tests.rs`.

use super::text::{index_text, joined_identifiers, name_words};
use super::{Error, Index, Result, watch};
use crate::catalog::names;
use crate::catalog::{
    BUNDLE_FILE, BUNDLES_DIR, BundleEntry, Catalog, Problem, TOOL_FILE, TOOLS_DIR, ToolEntry,
    builtin, page, read_tool_text,
};
use rusqlite::{OptionalExtension, Transaction, TransactionBehavior, params};
use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant, SystemTime};

mod loader;
mod pool;
mod stamp;
mod write;

use loader::*;
use pool::*;
use stamp::*;
use write::*;

/// What a sync did.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncReport {
    /// The index was (re)built from nothing.
    pub rebuilt: bool,
    /// Tool files read again because they changed (or were new).
    pub read: usize,
    /// Tools dropped because their files or folders went away.
    pub removed: usize,
    /// Files and folders whose stamps were compared.
    pub checked: usize,
    /// A watcher told what changed (see [`super::watch`]); only its paths were checked, unless
    /// it could not say.
    pub watcher: bool,
    pub millis: u64,
}

pub(crate) const BUILTIN_DIR: &str = "builtin";

impl Index {
    /// How many folders a watcher of the catalog would watch, as this index knows them:
    /// `bundles/`, each bundle folder and its `tools/`, each slug folder and version folder.
    /// From the rows, without a check: an estimate for the catalog as last indexed.
    pub fn folder_count(&self) -> Option<usize> {
        self.conn
            .query_row(
                "SELECT 1 + 2 * (SELECT count(*) FROM bundle WHERE dir != ?1)
                          + (SELECT count(*) FROM slug_dir WHERE bundle_dir != ?1)
                          + (SELECT count(*) FROM tool WHERE bundle_dir != ?1)",
                [BUILTIN_DIR],
                |r| r.get::<_, i64>(0),
            )
            .ok()
            .and_then(|n| usize::try_from(n).ok())
    }

    /// The folders of the bundles whose slug, bundleID or folder name is `name`, told from the
    /// index for every `bundle.json` as it was when indexed (its stamp: one stat a bundle, no
    /// file read) and read for the others (changed, stamped too recently to trust, or in a
    /// folder the index has not seen). `None` when a bundle cannot be read or the index says it
    /// could not: the caller then reads them all, and says why. Finding a bundle by slug so
    /// costs a stat per bundle and a read per bundle changed, not a read per bundle.
    pub(crate) fn bundle_dirs_named(&self, catalog: &Catalog, name: &str) -> Option<Vec<String>> {
        /// A bundle row: folder, slug, bundleID, bundle.json's stamp, problem.
        type Row = (
            String,
            Option<String>,
            Option<String>,
            String,
            Option<String>,
        );
        let rows: Vec<Row> = self
            .conn
            .prepare_cached(
                "SELECT dir, slug, bundle_id, file_stamp, problem FROM bundle WHERE dir != ?1",
            )
            .ok()?
            .query_map([BUILTIN_DIR], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
            })
            .ok()?
            .collect::<rusqlite::Result<_>>()
            .ok()?;
        let mut folders = subdirs(&catalog.bundles_dir());
        // No stamp is racy now: one stored as racy never matches.
        let stamps = StampReader::new(catalog.root(), i128::MAX);
        let mut found = Vec::new();
        // A bundle read again: whether `name` names it (`None`: it cannot be read).
        let read = |dir: &str| match catalog.load_bundle(&catalog.bundles_dir().join(dir), dir) {
            Ok(Some(entry)) => Some(entry.bundle.slug == name || dir == name),
            Ok(None) => Some(false),
            Err(_) => None,
        };
        for (dir, slug, id, stamp, problem) in rows {
            if problem.is_some() {
                return None;
            }
            if !folders.remove(&dir) {
                continue; // Gone since.
            }
            let file = format!("{BUNDLES_DIR}/{dir}/{BUNDLE_FILE}");
            let named = if stamp_is(stamps.facts(&file), i128::MAX, &stamp) {
                [slug.as_deref(), id.as_deref(), Some(dir.as_str())].contains(&Some(name))
            } else {
                read(&dir)?
            };
            if named {
                found.push(dir);
            }
        }
        // Folders the index has not seen.
        for dir in folders {
            if read(&dir)? {
                found.push(dir);
            }
        }
        found.sort();
        Some(found)
    }
}

impl Index {
    /// Bring the index up to date with the files (see the module comment).
    pub(super) fn sync(
        &mut self,
        catalog: &Catalog,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<SyncReport> {
        // Most syncs find nothing and only read, so they start as readers. One that must write
        // while another process writes gets SQLITE_BUSY; it then starts again as a writer,
        // waiting its turn, and checks afresh.
        let report = match self.sync_as(TransactionBehavior::Deferred, catalog, progress) {
            Err(Error::Database { source, .. }) if is_busy(&source) => {
                self.sync_as(TransactionBehavior::Immediate, catalog, progress)
            }
            other => other,
        }?;
        if !report.watcher && self.path.is_some() {
            catalog.check_note().walked(report.checked);
        }
        Ok(report)
    }

    fn sync_as(
        &mut self,
        behavior: TransactionBehavior,
        catalog: &Catalog,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<SyncReport> {
        let started = Instant::now();
        let mut report = SyncReport::default();
        let tx = self
            .conn
            .transaction_with_behavior(behavior)
            .map_err(|e| db(&self.path, e))?;
        // A build into an empty index (not one another process has just made) writes every
        // row before it makes the lookup indexes.
        let bulk = self.building
            && tx
                .query_row("SELECT NOT EXISTS (SELECT 1 FROM tool)", [], |r| r.get(0))
                .map_err(|e| db(&self.path, e))?;
        if bulk {
            tx.execute_batch(&super::lookup_indexes(false))
                .map_err(|e| db(&self.path, e))?;
        }
        sync_all(&tx, catalog, &mut report, progress).map_err(|e| into_error(&self.path, e))?;
        if bulk {
            tx.execute_batch(&super::lookup_indexes(true))
                .map_err(|e| db(&self.path, e))?;
        }
        tx.commit().map_err(|e| db(&self.path, e))?;
        self.building = false;
        report.millis = started.elapsed().as_millis() as u64;
        Ok(report)
    }

    /// Re-check one bundle folder after a write through toolctl changed it.
    pub fn refresh_bundle(&mut self, catalog: &Catalog, dir_name: &str) -> Result<()> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| db(&self.path, e))?;
        let mut report = SyncReport::default();
        let work = (|| -> Result<(), SyncError> {
            execute_cached(
                &tx,
                "INSERT OR IGNORE INTO bundle (dir) VALUES (?1)",
                [dir_name],
            )?;
            let scope = Scope::Bundle(dir_name.to_owned());
            check(&tx, catalog, &scope, &mut report, &mut |_, _| {})
        })();
        work.map_err(|e| into_error(&self.path, e))?;
        tx.commit().map_err(|e| db(&self.path, e))
    }
}

pub(super) use crate::base::state_db::is_busy;

fn db(path: &Option<std::path::PathBuf>, source: rusqlite::Error) -> Error {
    Error::Database {
        path: path.clone().unwrap_or_else(|| ":memory:".into()),
        source,
    }
}

/// Errors while syncing: the database, or the catalog (an unreadable `bundles/`, …).
enum SyncError {
    Db(rusqlite::Error),
    Catalog(crate::catalog::Error),
}

impl From<rusqlite::Error> for SyncError {
    fn from(e: rusqlite::Error) -> Self {
        Self::Db(e)
    }
}

impl From<crate::catalog::Error> for SyncError {
    fn from(e: crate::catalog::Error) -> Self {
        Self::Catalog(e)
    }
}

fn into_error(path: &Option<std::path::PathBuf>, e: SyncError) -> Error {
    match e {
        SyncError::Db(e) => db(path, e),
        SyncError::Catalog(e) => Error::Catalog(e),
    }
}

fn sync_all(
    tx: &Transaction,
    catalog: &Catalog,
    report: &mut SyncReport,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<(), SyncError> {
    // Availability depends on allowedHosts and mcpServers: when they change, every tool is read
    // again.
    let hosts = hosts_fingerprint(catalog);
    let hosts_changed = meta(tx, "hosts")? != hosts;
    if hosts_changed {
        execute_cached(tx, "UPDATE tool SET stamp = '', content_hash = NULL", [])?;
        set_meta(tx, "hosts", &hosts)?;
    }
    sync_builtins(tx, catalog)?;

    // Asked before any stamp is taken: the answer covers every change made before this point.
    let token = meta(tx, "watch")?;
    let answer = watch::changes_since(catalog.root(), &token);
    report.watcher = answer.is_some();

    let bundles_dir = catalog.bundles_dir();
    let bundles_stamp = stamp(&bundles_dir, racy_from());
    if moved(&bundles_stamp, &meta(tx, "bundles")?) {
        let present = subdirs(&bundles_dir);
        let known: Vec<String> = tx
            .prepare("SELECT dir FROM bundle WHERE dir != ?1")?
            .query_map([BUILTIN_DIR], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        for dir in known.iter().filter(|d| !present.contains(*d)) {
            report.removed += drop_bundle(tx, dir)?;
        }
        for dir in present.iter().filter(|d| !known.contains(*d)) {
            execute_cached(tx, "INSERT INTO bundle (dir) VALUES (?1)", [dir])?;
        }
        set_meta(tx, "bundles", &bundles_stamp)?;
    }
    let scopes = answer
        .as_ref()
        .filter(|_| !hosts_changed)
        .and_then(|answer| scopes_of(answer.paths.as_deref()?));
    match scopes {
        Some(scopes) => {
            for scope in &scopes {
                check(tx, catalog, scope, report, progress)?;
            }
        }
        None => check(tx, catalog, &Scope::All, report, progress)?,
    }
    if let Some(answer) = answer
        && answer.token != token
    {
        set_meta(tx, "watch", &answer.token)?;
    }
    Ok(())
}

/// The rows of the index a check compares with the files.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Scope {
    All,
    /// A bundle folder: its `bundle.json`, `tools/`, slug folders and tool files.
    Bundle(String),
    /// A slug folder (bundle folder, slug): its versions and their tool files.
    Slug(String, String),
    /// A tool file, by path.
    Tool(String),
}

/// More scopes than this from a watcher: one walk is cheaper than as many small checks.
const MAX_SCOPES: usize = 1_000;

/// What must be checked after changes to `paths` (relative to the catalog, from a watcher):
/// a path's change can move the stamp of the path and of its folder's listing, so its
/// folder's rows are checked, and everything under a folder that came or went. `None`: a
/// full check is as cheap or the change is everywhere.
fn scopes_of(paths: &[String]) -> Option<std::collections::BTreeSet<Scope>> {
    let mut scopes = std::collections::BTreeSet::new();
    for path in paths {
        let mut parts = path.split('/');
        if parts.next() != Some(BUNDLES_DIR) {
            continue;
        }
        let parts: Vec<&str> = parts.collect();
        let scope = match parts.as_slice() {
            // bundles/ itself.
            [] => return None,
            // A bundle folder, or a file or folder in one (bundle.json, tools/).
            [dir] | [dir, _] => Scope::Bundle((*dir).to_owned()),
            // A slug folder came or went: the bundle's tools/ listing.
            [dir, TOOLS_DIR, _] => Scope::Bundle((*dir).to_owned()),
            // A version folder came or went: the slug folder's listing.
            [dir, TOOLS_DIR, slug, _] => Scope::Slug((*dir).to_owned(), (*slug).to_owned()),
            // Anything in a version folder (tool.json, an editor's temporary file).
            [dir, TOOLS_DIR, slug, version, _] => {
                Scope::Tool(crate::catalog::tool_path(dir, slug, version))
            }
            // Deeper, or beside tools/: the index reads nothing there.
            _ => continue,
        };
        scopes.insert(scope);
    }
    // A scope inside another is checked by it.
    let within = |scope: &Scope, outer: &Scope| match (scope, outer) {
        (Scope::Slug(dir, _), Scope::Bundle(b)) => dir == b,
        (Scope::Tool(path), Scope::Bundle(b)) => {
            crate::catalog::parse_tool_path(path).is_some_and(|p| p.0 == b)
        }
        (Scope::Tool(path), Scope::Slug(b, s)) => {
            crate::catalog::parse_tool_path(path).is_some_and(|p| (p.0, p.1) == (b, s))
        }
        _ => false,
    };
    let all: Vec<Scope> = scopes.iter().cloned().collect();
    scopes.retain(|scope| !all.iter().any(|outer| within(scope, outer)));
    (scopes.len() <= MAX_SCOPES).then_some(scopes)
}

fn drop_bundle(tx: &Transaction, dir: &str) -> rusqlite::Result<usize> {
    let removed = delete_tools_where(tx, "bundle_dir = ?1", &[&dir])?;
    execute_cached(tx, "DELETE FROM slug_dir WHERE bundle_dir = ?1", [dir])?;
    execute_cached(tx, "DELETE FROM bundle WHERE dir = ?1", [dir])?;
    Ok(removed)
}

/// What tools' availability depends on in `toolctl.json` (`allowedHosts`, `mcpServers`, the
/// `exec` policy). The policy is in the fingerprint only when it allows `exec`, so turning it
/// on or off changes the fingerprint and every tool is read again.
fn hosts_fingerprint(catalog: &Catalog) -> String {
    let config = catalog.config();
    match (config.mcp_servers.is_empty(), config.exec_allowed()) {
        (true, false) => page::fingerprint(&config.allowed_hosts),
        (false, false) => page::fingerprint(&(&config.allowed_hosts, &*config.mcp_servers)),
        (_, true) => page::fingerprint(&(&config.allowed_hosts, &*config.mcp_servers, "exec")),
    }
}

/// The built-in tools' documents (which `toolctl.json` may change), as a fingerprint.
fn builtins_fingerprint(tools: &[ToolEntry]) -> String {
    page::fingerprint(&tools.iter().map(|t| &t.doc).collect::<Vec<_>>())
}

/// The enabled flag the index holds for the built-in bundle (`None`: no row).
fn indexed_builtin_bundle(tx: &rusqlite::Connection) -> rusqlite::Result<Option<bool>> {
    tx.query_row(
        "SELECT is_enabled FROM bundle WHERE dir = ?1",
        [BUILTIN_DIR],
        |r| r.get(0),
    )
    .optional()
}

/// The enabled flag the index holds for a built-in tool (`None`: no row).
fn indexed_builtin_tool(
    tx: &rusqlite::Connection,
    tool: &ToolEntry,
) -> rusqlite::Result<Option<bool>> {
    let path = format!("builtin:{}", tool.tool.slug);
    tx.query_row(
        "SELECT is_enabled FROM tool WHERE path = ?1",
        [&path],
        |r| r.get(0),
    )
    .optional()
}

impl Index {
    /// Whether what the index took from `toolctl.json` (the hosts and MCP servers tools'
    /// availability depends on, the built-in tools and their flags) is what the file says
    /// now: a sync would leave that part as it is.
    pub(super) fn config_in_step(&self, catalog: &Catalog) -> Result<bool> {
        let conn = &self.conn;
        let bundle = catalog.builtin_bundle();
        let tools = catalog.builtin_tools(&bundle);
        let in_step = (|| -> rusqlite::Result<bool> {
            if meta(conn, "hosts")? != hosts_fingerprint(catalog)
                || meta(conn, "builtin")? != builtins_fingerprint(&tools)
                || indexed_builtin_bundle(conn)? != Some(bundle.is_enabled)
            {
                return Ok(false);
            }
            for tool in &tools {
                if indexed_builtin_tool(conn, tool)? != Some(tool.is_enabled) {
                    return Ok(false);
                }
            }
            Ok(true)
        })();
        in_step.map_err(|e| db(&self.path, e))
    }
}

/// The built-in bundle and tools: rows from the binary, flags from `toolctl.json`.
fn sync_builtins(tx: &Transaction, catalog: &Catalog) -> Result<(), SyncError> {
    let bundle = catalog.builtin_bundle();
    let tools = catalog.builtin_tools(&bundle);
    let fingerprint = builtins_fingerprint(&tools);
    if meta(tx, "builtin")? != fingerprint {
        delete_tools_where(tx, "bundle_dir = ?1", &[&BUILTIN_DIR])?;
        for tool in &tools {
            execute_cached(
                tx,
                "INSERT INTO tool (path, bundle_dir, slug_dir) VALUES (?1, ?2, ?3)",
                params![
                    format!("builtin:{}", tool.tool.slug),
                    BUILTIN_DIR,
                    tool.tool.slug
                ],
            )?;
            put_tool(tx, tx.last_insert_rowid(), &Record::new(tool), "", None)?;
        }
        set_meta(tx, "builtin", &fingerprint)?;
    }
    // The flags live in toolctl.json. Write only what differs: a sync that finds nothing to do
    // must not write (it would take the database's write lock on every read).
    if indexed_builtin_bundle(tx)? != Some(bundle.is_enabled) {
        execute_cached(
            tx,
            "INSERT INTO bundle (dir, bundle_id, slug, is_enabled) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (dir) DO UPDATE SET is_enabled = excluded.is_enabled",
            params![
                BUILTIN_DIR,
                builtin::bundle_id().to_string(),
                builtin::SLUG,
                bundle.is_enabled
            ],
        )?;
    }
    for tool in &tools {
        if indexed_builtin_tool(tx, tool)? != Some(tool.is_enabled) {
            execute_cached(
                tx,
                "UPDATE tool SET is_enabled = ?2 WHERE path = ?1",
                params![format!("builtin:{}", tool.tool.slug), tool.is_enabled],
            )?;
        }
    }
    Ok(())
}

/// Compare the stamps of the files and folders in `scope` with the index, list the folders
/// that changed, and read the tool files that changed.
fn check(
    tx: &Transaction,
    catalog: &Catalog,
    scope: &Scope,
    report: &mut SyncReport,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<(), SyncError> {
    let root = catalog.root();
    let stamper = StampReader::new(root, racy_from());
    // Bundles, slug folders, then tool files, their stamps compared on the workers.
    std::thread::scope(|threads| {
        let mut pool = Pool::new(threads, &stamper);
        let only = match scope {
            Scope::All => Some(None),
            Scope::Bundle(dir) => Some(Some(dir.as_str())),
            Scope::Slug(..) | Scope::Tool(_) => None,
        };
        if let Some(only) = only {
            check_bundles(tx, &mut pool, catalog, only, report)?;
        }
        check_slugs(tx, &mut pool, scope, report)?;
        check_tools(tx, &mut pool, catalog, scope, report, progress)
    })
}

/// Bundles whose `bundle.json` changed: it is read again; whose `tools/` changed: it is listed
/// again; whose folder is gone: dropped.
fn check_bundles(
    tx: &Transaction,
    pool: &mut Pool,
    catalog: &Catalog,
    only: Option<&str>,
    report: &mut SyncReport,
) -> Result<(), SyncError> {
    let bundles: Vec<(String, String, String, Option<String>)> = tx
        .prepare(
            "SELECT dir, file_stamp, tools_stamp, slug FROM bundle
             WHERE dir != 'builtin' AND (?1 IS NULL OR dir = ?1)",
        )?
        .query_map([only], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
        .collect::<rusqlite::Result<_>>()?;
    // Rows 2i and 2i + 1: the bundle's file and tools folder.
    let mut batch = pool.batch();
    for (i, (dir, old_file, old_tools, _)) in bundles.iter().enumerate() {
        let i = 2 * i as i64;
        batch.push(
            i,
            &[BUNDLES_DIR, "/", dir, "/", BUNDLE_FILE],
            old_file,
            None,
        );
        batch.push(
            i + 1,
            &[BUNDLES_DIR, "/", dir, "/", TOOLS_DIR],
            old_tools,
            None,
        );
        if batch.rows.len() >= BATCH {
            let next = pool.batch();
            pool.submit(std::mem::replace(&mut batch, next));
        }
    }
    pool.submit(batch);
    report.checked += 2 * bundles.len();
    let mut now: Vec<Option<String>> = vec![None; 2 * bundles.len()];
    while let Some(mut batch) = pool.next(true) {
        for (i, stamp) in batch.moved.drain(..) {
            now[batch.rows[i].id as usize] = Some(stamp);
        }
        pool.recycle(batch);
    }
    for (i, (dir, old_file, old_tools, old_slug)) in bundles.iter().enumerate() {
        // Stamps that moved; the others are as stored.
        let (file_stamp, tools_stamp) = (now[2 * i].take(), now[2 * i + 1].take());
        let bundle_dir = catalog.bundles_dir().join(dir);
        // A path under the bundle folder has a stamp only if that is a folder.
        let gone = file_stamp.as_ref().unwrap_or(old_file).is_empty()
            && tools_stamp.as_ref().unwrap_or(old_tools).is_empty()
            && !bundle_dir.is_dir();
        if gone {
            report.removed += drop_bundle(tx, dir)?;
            continue;
        }
        if let Some(file_stamp) = file_stamp {
            let (id, slug, enabled, deleted, problem) = match catalog.load_bundle(&bundle_dir, dir)
            {
                Ok(Some(b)) => (
                    Some(b.bundle.bundle_id.to_string()),
                    Some(b.bundle.slug.clone()),
                    b.is_enabled,
                    b.is_deleted(),
                    None,
                ),
                Ok(None) => (None, None, false, false, None),
                Err(problem) => (None, None, false, false, Some(problem.message)),
            };
            if slug != *old_slug {
                // The bundle slug is part of every tool's reference and text.
                execute_cached(
                    tx,
                    "UPDATE tool SET stamp = '', content_hash = NULL WHERE bundle_dir = ?1",
                    [dir],
                )?;
            }
            execute_cached(
                tx,
                "UPDATE bundle SET bundle_id = ?2, slug = ?3, is_enabled = ?4, is_deleted = ?5,
                        problem = ?6, file_stamp = ?7 WHERE dir = ?1",
                params![dir, id, slug, enabled, deleted, problem, file_stamp],
            )?;
        }
        if let Some(tools_stamp) = tools_stamp {
            let present = subdirs(&bundle_dir.join(TOOLS_DIR));
            let known: Vec<String> = tx
                .prepare("SELECT slug FROM slug_dir WHERE bundle_dir = ?1")?
                .query_map([dir], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()?;
            for slug in known.iter().filter(|s| !present.contains(*s)) {
                report.removed +=
                    delete_tools_where(tx, "bundle_dir = ?1 AND slug_dir = ?2", &[dir, slug])?;
                execute_cached(
                    tx,
                    "DELETE FROM slug_dir WHERE bundle_dir = ?1 AND slug = ?2",
                    [dir, slug],
                )?;
            }
            for slug in present.iter().filter(|s| !known.contains(*s)) {
                execute_cached(
                    tx,
                    "INSERT INTO slug_dir (bundle_dir, slug) VALUES (?1, ?2)",
                    [dir, slug],
                )?;
            }
            execute_cached(
                tx,
                "UPDATE bundle SET tools_stamp = ?2 WHERE dir = ?1",
                [dir, &tools_stamp],
            )?;
        }
    }
    Ok(())
}

/// Slug folders that changed: their versions are listed again.
fn check_slugs(
    tx: &Transaction,
    pool: &mut Pool,
    scope: &Scope,
    report: &mut SyncReport,
) -> Result<(), SyncError> {
    let (sql, only): (_, Vec<&str>) = match scope {
        Scope::All => (
            "SELECT rowid, bundle_dir, slug, stamp FROM slug_dir
             WHERE rowid > ?1 ORDER BY rowid LIMIT ?2",
            vec![],
        ),
        Scope::Bundle(dir) => (
            "SELECT rowid, bundle_dir, slug, stamp FROM slug_dir
             WHERE rowid > ?1 AND bundle_dir = ?3 ORDER BY rowid LIMIT ?2",
            vec![dir],
        ),
        Scope::Slug(dir, slug) => (
            "SELECT rowid, bundle_dir, slug, stamp FROM slug_dir
             WHERE rowid > ?1 AND bundle_dir = ?3 AND slug = ?4 ORDER BY rowid LIMIT ?2",
            vec![dir, slug],
        ),
        Scope::Tool(_) => return Ok(()),
    };
    let push = |row: &rusqlite::Row, batch: &mut Batch| {
        let id = row.get(0)?;
        let (dir, slug) = (text(row, 1)?, text(row, 2)?);
        let path = [BUNDLES_DIR, "/", dir, "/", TOOLS_DIR, "/", slug];
        batch.push(id, &path, text(row, 3)?, None);
        Ok(id)
    };
    let checked = scan(tx, pool, sql, &only, true, push, |batch| {
        for ((i, now), present) in batch.moved.iter().zip(&batch.listings) {
            let path = batch.path(*i);
            let (dir, slug) = slug_path_parts(path).ok_or_else(|| odd_path(path))?;
            list_versions(tx, present, dir, slug, path, now, report)?;
        }
        Ok(())
    })?;
    report.checked += checked;
    Ok(())
}

/// Tool files that changed (edited, replaced or removed): they are read again.
fn check_tools<'scope, 'env>(
    tx: &Transaction,
    pool: &mut Pool<'scope, 'env>,
    catalog: &'env Catalog,
    scope: &Scope,
    report: &mut SyncReport,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<(), SyncError> {
    // For the progress bar (a narrower check is too small for one). A bare count(*) of the
    // table counts the cells of its smallest b-tree without decoding a row (a 100,000-tool
    // index: 2 ms instead of 10).
    let total: i64 = match scope {
        Scope::All => tx.query_row(
            "SELECT (SELECT count(*) FROM tool) - (SELECT count(*) FROM tool WHERE bundle_dir = 'builtin')",
            [],
            |r| r.get(0),
        )?,
        Scope::Bundle(dir) => tx.query_row(
            "SELECT count(*) FROM tool WHERE bundle_dir = ?1 AND bundle_dir != 'builtin'",
            [dir],
            |r| r.get(0),
        )?,
        Scope::Slug(..) | Scope::Tool(_) => 0,
    };
    let total = total as usize;
    let (sql, only): (_, Vec<&str>) = match scope {
        Scope::All => (
            "SELECT id, path, stamp, content_hash FROM tool
             WHERE id > ?1 AND bundle_dir != 'builtin' ORDER BY id LIMIT ?2",
            vec![],
        ),
        Scope::Bundle(dir) => (
            "SELECT id, path, stamp, content_hash FROM tool
             WHERE id > ?1 AND bundle_dir = ?3 AND bundle_dir != 'builtin' ORDER BY id LIMIT ?2",
            vec![dir],
        ),
        Scope::Slug(dir, slug) => (
            "SELECT id, path, stamp, content_hash FROM tool
             WHERE id > ?1 AND bundle_dir = ?3 AND slug_dir = ?4 AND bundle_dir != 'builtin'
             ORDER BY id LIMIT ?2",
            vec![dir, slug],
        ),
        Scope::Tool(path) => (
            "SELECT id, path, stamp, content_hash FROM tool
             WHERE id > ?1 AND path = ?3 AND bundle_dir != 'builtin' ORDER BY id LIMIT ?2",
            vec![path],
        ),
    };
    let push = |row: &rusqlite::Row, batch: &mut Batch| {
        let id = row.get(0)?;
        let hash = row.get_ref(3)?;
        let hash = match hash {
            rusqlite::types::ValueRef::Null => None,
            _ => Some(text(row, 3)?),
        };
        batch.push(id, &[text(row, 1)?], text(row, 2)?, hash);
        Ok(id)
    };
    let mut loader = Loader::new(pool.scope, catalog);
    let mut done = 0;
    let checked = scan(tx, pool, sql, &only, false, push, |batch| {
        for (i, now) in &batch.moved {
            let path = batch.path(*i);
            let (dir, slug, version) =
                crate::catalog::parse_tool_path(path).ok_or_else(|| odd_path(path))?;
            let pending = Pending {
                id: batch.rows[*i].id,
                dir: dir.to_owned(),
                slug: slug.to_owned(),
                version: version.to_owned(),
                now: now.clone(),
                hash: batch.hash(*i).map(str::to_owned),
            };
            loader.push(tx, pending, report)?;
        }
        done += batch.rows.len();
        progress(done - loader.unwritten(), total);
        Ok(())
    })?;
    report.checked += checked;
    loader.finish(tx, report)?;
    progress(done, total);
    Ok(())
}

/// A text column.
fn text<'r>(row: &'r rusqlite::Row, i: usize) -> rusqlite::Result<&'r str> {
    row.get_ref(i)?.as_str().map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, e.into())
    })
}

/// The bundle folder and slug folder of a slug folder's path (`bundles/<dir>/tools/<slug>`).
fn slug_path_parts(path: &str) -> Option<(&str, &str)> {
    let mut parts = path.split('/');
    match [(); 4].map(|()| parts.next()) {
        [Some(BUNDLES_DIR), Some(dir), Some(TOOLS_DIR), Some(slug)] if parts.next().is_none() => {
            Some((dir, slug))
        }
        _ => None,
    }
}

/// A path in the index that is not made of the folder names it should be (the index was
/// written by something else): the index cannot be used.
fn odd_path(path: &str) -> rusqlite::Error {
    rusqlite::Error::SqliteFailure(
        rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CORRUPT),
        Some(format!("unexpected path in the index: {path}")),
    )
}

#[cfg(test)]
mod tests;
