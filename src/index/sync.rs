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
//! with nothing to do is one `stat` per tool, slug folder and bundle. Problems (a file that
//! does not parse, …) are stored with the row and reported by every command that reads it.
//!
//! Racy stamps (git's "racily clean" files): a file changed again within the filesystem's
//! timestamp granularity (1 s on some filesystems, a kernel tick on Linux before 6.13), or
//! dated in the future, can keep its stamp across an edit of the same size. So a stamp whose
//! mtime is less than [`RACY_WINDOW`] before the check is marked racy (a trailing `~`) and is
//! not trusted: the next check lists a racy folder again and reads a racy `tool.json` again,
//! comparing its SHA-256 with the one stored when it was indexed; an unchanged file is not
//! parsed again (and not counted as read).

use super::text::index_text;
use super::{Error, Index, Result};
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
use std::time::{Duration, Instant, SystemTime};

/// How recent an mtime makes a stamp racy: FAT's 2-second granularity, the coarsest in use.
const RACY_WINDOW: Duration = Duration::from_secs(2);

/// Nanoseconds since the epoch from which an mtime makes a stamp racy, for a check now.
fn racy_from() -> i128 {
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    now.saturating_sub(RACY_WINDOW).as_nanos() as i128
}

/// Whether a stored stamp must be checked again even when the file's stamp is the same.
fn is_racy(stamp: &str) -> bool {
    stamp.ends_with('~')
}

/// Whether what a stamp stands for must be looked at again.
fn moved(now: &str, old: &str) -> bool {
    now != old || is_racy(old)
}

/// The SHA-256 of a file's text, as hex.
fn content_hash(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

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
    pub millis: u64,
}

/// The change stamp of a file or folder; empty when it does not exist; ending in `~` when its
/// mtime is at or after `racy_from` (see the module comment).
fn stamp(path: &Path, racy_from: i128) -> String {
    let mut out = String::new();
    write_stamp(
        std::fs::metadata(path).ok().map(|m| facts(&m)),
        racy_from,
        &mut out,
    );
    out
}

/// What a stamp is made of: mtime (nanoseconds since the epoch), size and inode.
type Facts = (i128, u64, u64);

fn facts(meta: &std::fs::Metadata) -> Facts {
    let mtime =
        meta.modified()
            .ok()
            .map_or(0, |t| match t.duration_since(SystemTime::UNIX_EPOCH) {
                Ok(after) => after.as_nanos() as i128,
                Err(before) => -(before.duration().as_nanos() as i128),
            });
    #[cfg(unix)]
    let ino = std::os::unix::fs::MetadataExt::ino(meta);
    #[cfg(not(unix))]
    let ino = 0;
    (mtime, meta.len(), ino)
}

/// Write the stamp of a file (`None`: it does not exist) to `out`, in place of what it held.
fn write_stamp(facts: Option<Facts>, racy_from: i128, out: &mut String) {
    use std::fmt::Write;
    out.clear();
    let Some((mtime, len, ino)) = facts else {
        return;
    };
    let racy = if mtime >= racy_from { "~" } else { "" };
    // Writing to a String cannot fail.
    #[cfg(unix)]
    let _ = write!(out, "{mtime}:{len}:{ino}{racy}");
    #[cfg(not(unix))]
    let _ = (write!(out, "{mtime}:{len}{racy}"), ino);
}

/// Takes the stamps of paths of a catalog (relative to its root).
///
/// On Unix, paths under `bundles/` are looked up from an open handle of that folder
/// (`fstatat`): the kernel walks fewer components than from `/`, and no path is joined. On a
/// 10,000-tool catalog that makes a stat about a quarter cheaper than `std::fs::metadata` of
/// the full path.
struct Stamper<'a> {
    root: &'a Path,
    racy_from: i128,
    #[cfg(unix)]
    bundles: Option<std::fs::File>,
}

impl<'a> Stamper<'a> {
    fn new(root: &'a Path, racy_from: i128) -> Self {
        Self {
            root,
            racy_from,
            // Without it (a folder that cannot be opened), paths are looked up in full.
            #[cfg(unix)]
            bundles: std::fs::File::open(root.join(BUNDLES_DIR)).ok(),
        }
    }

    /// The stamp of `path` (see [`stamp`]), written to `out` in place of what it held.
    fn stamp_into(&self, path: &str, out: &mut String) {
        write_stamp(self.facts(path), self.racy_from, out);
    }

    fn facts(&self, path: &str) -> Option<Facts> {
        #[cfg(unix)]
        if let (Some(bundles), Some(rest)) = (
            &self.bundles,
            path.strip_prefix(BUNDLES_DIR)
                .and_then(|p| p.strip_prefix('/')),
        ) {
            // The same figures std's metadata gives: mtime as seconds and nanoseconds.
            let st = rustix::fs::statat(bundles, rest, rustix::fs::AtFlags::empty()).ok()?;
            let mtime = st.st_mtime as i128 * 1_000_000_000 + st.st_mtime_nsec as i128;
            return Some((mtime, st.st_size as u64, st.st_ino as u64));
        }
        std::fs::metadata(self.root.join(path))
            .ok()
            .map(|m| facts(&m))
    }
}

/// Visible sub-folder names of `dir`.
fn subdirs(dir: &Path) -> HashSet<String> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| e.path().is_dir())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| !n.starts_with('.'))
                .collect()
        })
        .unwrap_or_default()
}

const BUILTIN_DIR: &str = "builtin";

/// The words of a tool's arguments: names (split) and descriptions, nested objects included.
fn argument_text(schema: Option<&Value>, depth: usize, out: &mut String) {
    let Some(properties) = schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
    else {
        return;
    };
    for (name, spec) in properties {
        out.push_str(&index_text(name));
        out.push(' ');
        if let Some(text) = spec.get("description").and_then(Value::as_str) {
            out.push_str(text);
            out.push(' ');
        }
        if depth < 3 {
            argument_text(Some(spec), depth + 1, out);
            argument_text(spec.get("items"), depth + 1, out);
        }
    }
}

/// Execute a statement, prepared once per connection (the sync runs the same few statements
/// thousands of times).
fn run<P: rusqlite::Params>(tx: &Transaction, sql: &str, params: P) -> rusqlite::Result<usize> {
    tx.prepare_cached(sql)?.execute(params)
}

/// A time as nanoseconds since the epoch, so recency sorts as a number: the text form has no
/// fixed width (`…00Z` would sort after `…00.5Z`). Saturates outside 1677–2262.
fn modified_ns(time: jiff::Timestamp) -> i64 {
    let ns = time.as_nanosecond();
    i64::try_from(ns).unwrap_or(if ns < 0 { i64::MIN } else { i64::MAX })
}

/// Write one tool's row and full-text entry.
fn put_tool(
    tx: &Transaction,
    id: i64,
    entry: &ToolEntry,
    stamp: &str,
    hash: Option<&str>,
) -> rusqlite::Result<()> {
    let tool = &entry.tool;
    run(
        tx,
        "UPDATE tool SET stamp = ?2, content_hash = ?9, problem = NULL, tool_id = ?3, version = ?4,
                tags = ?5, is_enabled = ?6, unavailable = ?7, modified_ns = ?8 WHERE id = ?1",
        params![
            id,
            stamp,
            tool.tool_id.to_string(),
            tool.version,
            serde_json::to_string(&tool.tags).unwrap_or_else(|_| "[]".into()),
            entry.is_enabled,
            entry.unavailable,
            modified_ns(tool.modified_at),
            hash,
        ],
    )?;
    let mut args = String::new();
    argument_text(entry.doc.get("argSchema"), 0, &mut args);
    run(tx, "DELETE FROM tool_fts WHERE rowid = ?1", [id])?;
    run(
        tx,
        "INSERT INTO tool_fts (rowid, name, tags, args, description, bundle) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![
            id,
            format!(
                "{} {}",
                index_text(&tool.slug),
                index_text(&tool.display_name)
            ),
            index_text(&tool.tags.join(" ")),
            args,
            tool.description,
            index_text(&entry.bundle_slug),
        ],
    )?;
    Ok(())
}

/// Mark a tool row as not a tool (file gone, or cannot be used) and drop its text.
fn clear_tool(
    tx: &Transaction,
    id: i64,
    stamp: &str,
    problem: Option<&str>,
    hash: Option<&str>,
) -> rusqlite::Result<()> {
    run(
        tx,
        "UPDATE tool SET stamp = ?2, content_hash = ?4, problem = ?3, tool_id = NULL,
                version = NULL, tags = '[]', is_enabled = 0, unavailable = NULL, modified_ns = 0
         WHERE id = ?1",
        params![id, stamp, problem, hash],
    )?;
    run(tx, "DELETE FROM tool_fts WHERE rowid = ?1", [id])?;
    Ok(())
}

fn delete_tools_where(
    tx: &Transaction,
    condition: &str,
    args: &[&dyn rusqlite::ToSql],
) -> rusqlite::Result<usize> {
    tx.execute(
        &format!("DELETE FROM tool_fts WHERE rowid IN (SELECT id FROM tool WHERE {condition})"),
        args,
    )?;
    tx.execute(&format!("DELETE FROM tool WHERE {condition}"), args)
}

fn meta(tx: &Transaction, key: &str) -> rusqlite::Result<String> {
    Ok(tx
        .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
        .optional()?
        .unwrap_or_default())
}

fn set_meta(tx: &Transaction, key: &str, value: &str) -> rusqlite::Result<()> {
    run(
        tx,
        "INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        [key, value],
    )?;
    Ok(())
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
        match self.sync_as(TransactionBehavior::Deferred, catalog, progress) {
            Err(Error::Database { source, .. }) if is_busy(&source) => {
                self.sync_as(TransactionBehavior::Immediate, catalog, progress)
            }
            other => other,
        }
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
        sync_all(&tx, catalog, &mut report, progress).map_err(|e| into_error(&self.path, e))?;
        tx.commit().map_err(|e| db(&self.path, e))?;
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
            run(
                &tx,
                "INSERT OR IGNORE INTO bundle (dir) VALUES (?1)",
                [dir_name],
            )?;
            check(&tx, catalog, Some(dir_name), &mut report, &mut |_, _| {})
        })();
        work.map_err(|e| into_error(&self.path, e))?;
        tx.commit().map_err(|e| db(&self.path, e))
    }
}

fn is_busy(error: &rusqlite::Error) -> bool {
    matches!(
        error.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

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

/// A tool file to read.
struct Pending {
    id: i64,
    dir: String,
    slug: String,
    version: String,
    /// Its stamp now.
    now: String,
    /// The SHA-256 of the text indexed, when the file may not have changed since (a racy
    /// stamp that is the same now): the text is compared before it is parsed again.
    hash: Option<String>,
}

/// What became of a pending tool file.
enum Loaded {
    /// No tool: the file is gone, or its bundle is (its row says why).
    Gone,
    /// The same text as indexed.
    Same,
    /// Read again; with the text's hash when its stamp is racy.
    Read(Box<Result<Option<ToolEntry>, Problem>>, Option<String>),
}

/// Stamps of many paths, taken on all cores: a `stat` is cheap but not free, and a change
/// check takes one per tool.
fn stamps(stamper: &Stamper, paths: &[String]) -> Vec<String> {
    let one = |p: &String| {
        let mut out = String::new();
        stamper.stamp_into(p, &mut out);
        out
    };
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(8);
    if threads == 1 || paths.len() < 512 {
        return paths.iter().map(one).collect();
    }
    let chunk = paths.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let workers: Vec<_> = paths
            .chunks(chunk)
            .map(|part| scope.spawn(move || part.iter().map(one).collect::<Vec<_>>()))
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_default())
            .collect()
    })
}

fn sync_all(
    tx: &Transaction,
    catalog: &Catalog,
    report: &mut SyncReport,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<(), SyncError> {
    // Availability depends on allowedHosts: when they change, every tool is read again.
    let hosts = page::fingerprint(&catalog.config().allowed_hosts);
    if meta(tx, "hosts")? != hosts {
        run(tx, "UPDATE tool SET stamp = ''", [])?;
        set_meta(tx, "hosts", &hosts)?;
    }
    sync_builtins(tx, catalog)?;

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
            run(tx, "INSERT INTO bundle (dir) VALUES (?1)", [dir])?;
        }
        set_meta(tx, "bundles", &bundles_stamp)?;
    }
    check(tx, catalog, None, report, progress)
}

fn drop_bundle(tx: &Transaction, dir: &str) -> rusqlite::Result<usize> {
    let removed = delete_tools_where(tx, "bundle_dir = ?1", &[&dir])?;
    run(tx, "DELETE FROM slug_dir WHERE bundle_dir = ?1", [dir])?;
    run(tx, "DELETE FROM bundle WHERE dir = ?1", [dir])?;
    Ok(removed)
}

/// The built-in bundle and tools: rows from the binary, flags from `toolctl.json`.
fn sync_builtins(tx: &Transaction, catalog: &Catalog) -> Result<(), SyncError> {
    let bundle = catalog.builtin_bundle();
    let tools = catalog.builtin_tools(&bundle);
    let fingerprint = page::fingerprint(&tools.iter().map(|t| &t.doc).collect::<Vec<_>>());
    if meta(tx, "builtin")? != fingerprint {
        delete_tools_where(tx, "bundle_dir = ?1", &[&BUILTIN_DIR])?;
        for tool in &tools {
            run(
                tx,
                "INSERT INTO tool (path, bundle_dir, slug_dir) VALUES (?1, ?2, ?3)",
                params![
                    format!("builtin:{}", tool.tool.slug),
                    BUILTIN_DIR,
                    tool.tool.slug
                ],
            )?;
            put_tool(tx, tx.last_insert_rowid(), tool, "", None)?;
        }
        set_meta(tx, "builtin", &fingerprint)?;
    }
    // The flags live in toolctl.json. Write only what differs: a sync that finds nothing to do
    // must not write (it would take the database's write lock on every read).
    let indexed: Option<bool> = tx
        .query_row(
            "SELECT is_enabled FROM bundle WHERE dir = ?1",
            [BUILTIN_DIR],
            |r| r.get(0),
        )
        .optional()?;
    if indexed != Some(bundle.is_enabled) {
        run(
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
        let path = format!("builtin:{}", tool.tool.slug);
        let indexed: Option<bool> = tx
            .query_row(
                "SELECT is_enabled FROM tool WHERE path = ?1",
                [&path],
                |r| r.get(0),
            )
            .optional()?;
        if indexed != Some(tool.is_enabled) {
            run(
                tx,
                "UPDATE tool SET is_enabled = ?2 WHERE path = ?1",
                params![path, tool.is_enabled],
            )?;
        }
    }
    Ok(())
}

/// Compare the stamps of the bundles' files and folders (all bundles, or the one in `only`)
/// with the index, list the folders that changed, and read the tool files that changed.
fn check(
    tx: &Transaction,
    catalog: &Catalog,
    only: Option<&str>,
    report: &mut SyncReport,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<(), SyncError> {
    let root = catalog.root();
    let stamper = Stamper::new(root, racy_from());
    let scope = "dir != 'builtin' AND (?1 IS NULL OR dir = ?1)";

    // Bundles: bundle.json and tools/.
    let bundles: Vec<(String, String, String, Option<String>)> = tx
        .prepare(&format!(
            "SELECT dir, file_stamp, tools_stamp, slug FROM bundle WHERE {scope}"
        ))?
        .query_map([only], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let paths: Vec<String> = bundles
        .iter()
        .flat_map(|(dir, ..)| {
            [
                format!("bundles/{dir}/{BUNDLE_FILE}"),
                format!("bundles/{dir}/{TOOLS_DIR}"),
            ]
        })
        .collect();
    let now = stamps(&stamper, &paths);
    for (i, (dir, old_file, old_tools, old_slug)) in bundles.iter().enumerate() {
        let (file_stamp, tools_stamp) = (&now[2 * i], &now[2 * i + 1]);
        let bundle_dir = catalog.bundles_dir().join(dir);
        if !bundle_dir.is_dir() {
            report.removed += drop_bundle(tx, dir)?;
            continue;
        }
        if moved(file_stamp, old_file) {
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
                run(
                    tx,
                    "UPDATE tool SET stamp = '' WHERE bundle_dir = ?1",
                    [dir],
                )?;
            }
            run(
                tx,
                "UPDATE bundle SET bundle_id = ?2, slug = ?3, is_enabled = ?4, is_deleted = ?5,
                        problem = ?6, file_stamp = ?7 WHERE dir = ?1",
                params![dir, id, slug, enabled, deleted, problem, file_stamp],
            )?;
        }
        if moved(tools_stamp, old_tools) {
            let present = subdirs(&bundle_dir.join(TOOLS_DIR));
            let known: Vec<String> = tx
                .prepare("SELECT slug FROM slug_dir WHERE bundle_dir = ?1")?
                .query_map([dir], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()?;
            for slug in known.iter().filter(|s| !present.contains(*s)) {
                report.removed +=
                    delete_tools_where(tx, "bundle_dir = ?1 AND slug_dir = ?2", &[dir, slug])?;
                run(
                    tx,
                    "DELETE FROM slug_dir WHERE bundle_dir = ?1 AND slug = ?2",
                    [dir, slug],
                )?;
            }
            for slug in present.iter().filter(|s| !known.contains(*s)) {
                run(
                    tx,
                    "INSERT INTO slug_dir (bundle_dir, slug) VALUES (?1, ?2)",
                    [dir, slug],
                )?;
            }
            run(
                tx,
                "UPDATE bundle SET tools_stamp = ?2 WHERE dir = ?1",
                [dir, tools_stamp],
            )?;
        }
    }

    // Slug folders, a chunk at a time so memory stays small on big catalogs.
    let mut after = (String::new(), String::new());
    loop {
        let slugs: Vec<(String, String, String)> = tx
            .prepare_cached(
                "SELECT bundle_dir, slug, stamp FROM slug_dir
                 WHERE (?1 IS NULL OR bundle_dir = ?1) AND (bundle_dir, slug) > (?2, ?3)
                 ORDER BY bundle_dir, slug LIMIT ?4",
            )?
            .query_map(params![only, after.0, after.1, CHUNK as i64], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })?
            .collect::<rusqlite::Result<_>>()?;
        let Some(last) = slugs.last() else { break };
        after = (last.0.clone(), last.1.clone());
        let paths: Vec<String> = slugs
            .iter()
            .map(|(dir, slug, _)| format!("bundles/{dir}/{TOOLS_DIR}/{slug}"))
            .collect();
        let now = stamps(&stamper, &paths);
        for ((dir, slug, old_stamp), (slug_path, slug_stamp)) in
            slugs.iter().zip(paths.iter().zip(&now))
        {
            if moved(slug_stamp, old_stamp) {
                list_versions(tx, root, dir, slug, slug_path, slug_stamp, report)?;
            }
        }
    }

    // Tool files, a chunk at a time: edited, replaced or removed ones are read again.
    let total: i64 = tx.query_row(
        "SELECT count(*) FROM tool WHERE bundle_dir != 'builtin' AND (?1 IS NULL OR bundle_dir = ?1)",
        [only],
        |r| r.get(0),
    )?;
    let mut bundles = HashMap::new();
    let mut done = 0;
    let mut after = String::new();
    loop {
        let tools: Vec<(i64, String, String, String, String, Option<String>)> = tx
            .prepare_cached(
                "SELECT id, path, bundle_dir, slug_dir, stamp, content_hash FROM tool
                 WHERE bundle_dir != 'builtin' AND (?1 IS NULL OR bundle_dir = ?1) AND path > ?2
                 ORDER BY path LIMIT ?3",
            )?
            .query_map(params![only, after, CHUNK as i64], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                ))
            })?
            .collect::<rusqlite::Result<_>>()?;
        let Some(last) = tools.last() else { break };
        after = last.1.clone();
        done += tools.len();
        let paths: Vec<String> = tools.iter().map(|t| t.1.clone()).collect();
        let now = stamps(&stamper, &paths);
        let pending: Vec<Pending> = tools
            .into_iter()
            .zip(now)
            .filter(|((.., old, _), now)| moved(now, old))
            .map(|((id, path, dir, slug, old, hash), now)| {
                let version = path.rsplit('/').nth(1).unwrap_or_default().to_owned();
                // A racy stamp that is the same now: the file is the same if its text is.
                let same_stamp =
                    is_racy(&old) && now.trim_end_matches('~') == old.trim_end_matches('~');
                Pending {
                    id,
                    dir,
                    slug,
                    version,
                    now,
                    hash: hash.filter(|_| same_stamp),
                }
            })
            .collect();
        load_pending(tx, catalog, pending, &mut bundles, report)?;
        progress(done, total as usize);
    }
    Ok(())
}

/// A slug folder changed: versions were added or removed; make the rows match.
fn list_versions(
    tx: &Transaction,
    root: &Path,
    dir: &str,
    slug: &str,
    slug_path: &str,
    slug_stamp: &str,
    report: &mut SyncReport,
) -> rusqlite::Result<()> {
    let present = subdirs(&root.join(slug_path));
    let known: Vec<String> = tx
        .prepare_cached("SELECT path FROM tool WHERE bundle_dir = ?1 AND slug_dir = ?2")?
        .query_map([dir, slug], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let wanted: HashSet<String> = present
        .iter()
        .map(|version| format!("{slug_path}/{version}/{TOOL_FILE}"))
        .collect();
    for path in known.iter().filter(|p| !wanted.contains(*p)) {
        report.removed += delete_tools_where(tx, "path = ?1", &[path])?;
    }
    for path in wanted.iter().filter(|p| !known.contains(*p)) {
        run(
            tx,
            "INSERT INTO tool (path, bundle_dir, slug_dir) VALUES (?1, ?2, ?3)",
            params![path, dir, slug],
        )?;
    }
    run(
        tx,
        "UPDATE slug_dir SET stamp = ?3 WHERE bundle_dir = ?1 AND slug = ?2",
        [dir, slug, slug_stamp],
    )?;
    Ok(())
}

/// Rows of the index read (and stamped) at a time during a check.
const CHUNK: usize = 4096;

/// How many tool files are read (in parallel) before their rows are written.
const LOAD_BATCH: usize = 1024;

/// Read changed tool files (on all cores, a batch at a time) and store what they hold.
/// `bundles` caches each bundle's `bundle.json` across calls.
fn load_pending(
    tx: &Transaction,
    catalog: &Catalog,
    pending: Vec<Pending>,
    bundles: &mut HashMap<String, Option<BundleEntry>>,
    report: &mut SyncReport,
) -> Result<(), SyncError> {
    for p in &pending {
        if !bundles.contains_key(&p.dir) {
            let loaded = catalog
                .load_bundle(&catalog.bundles_dir().join(&p.dir), &p.dir)
                .ok()
                .flatten();
            bundles.insert(p.dir.clone(), loaded);
        }
    }
    let bundles = &*bundles;
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(8);
    let load = |p: &Pending| -> Loaded {
        let Some(Some(bundle)) = bundles.get(&p.dir) else {
            return Loaded::Gone;
        };
        if p.now.is_empty() {
            return Loaded::Gone;
        }
        let path = catalog
            .bundles_dir()
            .join(&p.dir)
            .join(TOOLS_DIR)
            .join(&p.slug)
            .join(&p.version)
            .join(TOOL_FILE);
        let text = match read_tool_text(&path) {
            Ok(Some(text)) => text,
            Ok(None) => return Loaded::Read(Box::new(Ok(None)), None),
            Err(problem) => return Loaded::Read(Box::new(Err(problem)), None),
        };
        // Hashed only when it may save a parse or the stamp cannot be trusted next time.
        let hash = (p.hash.is_some() || is_racy(&p.now)).then(|| content_hash(&text));
        if p.hash.is_some() && p.hash == hash {
            return Loaded::Same;
        }
        let entry = catalog.tool_from_text(bundle, &p.slug, &p.version, &path, &text);
        Loaded::Read(Box::new(entry.map(Some)), hash.filter(|_| is_racy(&p.now)))
    };
    for batch in pending.chunks(LOAD_BATCH) {
        let chunk = batch.len().div_ceil(threads).max(1);
        let loaded: Vec<_> = std::thread::scope(|scope| {
            let workers: Vec<_> = batch
                .chunks(chunk)
                .map(|part| scope.spawn(move || part.iter().map(load).collect::<Vec<_>>()))
                .collect();
            workers
                .into_iter()
                .flat_map(|w| w.join().unwrap_or_default())
                .collect()
        });
        for (p, loaded) in batch.iter().zip(loaded) {
            let (id, now) = (p.id, p.now.as_str());
            match loaded {
                Loaded::Gone => clear_tool(tx, id, now, None, None)?,
                Loaded::Same => {
                    let hash = Some(&p.hash).filter(|_| is_racy(now));
                    run(
                        tx,
                        "UPDATE tool SET stamp = ?2, content_hash = ?3 WHERE id = ?1 AND stamp != ?2",
                        params![id, now, hash],
                    )?;
                }
                Loaded::Read(result, hash) => {
                    report.read += 1;
                    let hash = hash.as_deref();
                    match *result {
                        Ok(Some(entry)) => put_tool(tx, id, &entry, now, hash)?,
                        Ok(None) => clear_tool(tx, id, now, None, hash)?,
                        Err(problem) => clear_tool(tx, id, now, Some(&problem.message), hash)?,
                    }
                }
            }
        }
    }
    Ok(())
}
