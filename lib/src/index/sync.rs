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
//! One file of about 1,500 lines, on purpose: the change check, the stat workers, the loader
//! threads and the writes share the row and stamp types and the order of one transaction, and
//! each part is only correct with the others in view (what a watcher's scope covers, which
//! thread may write, when a racy stamp is trusted); the tests are in `sync/tests.rs`.

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
    /// Files and folders whose stamps were compared.
    pub checked: usize,
    /// A watcher told what changed (see [`super::watch`]); only its paths were checked, unless
    /// it could not say.
    pub watcher: bool,
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
type Constraints = (i128, u64, u64);

fn facts(meta: &std::fs::Metadata) -> Constraints {
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
fn write_stamp(facts: Option<Constraints>, racy_from: i128, out: &mut String) {
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

/// Whether [`write_stamp`] would write `old` for these facts, without writing it: the numbers
/// are compared as `itoa` writes them (formatting every stamp took ~5% of a check's CPU).
fn stamp_is(facts: Option<Constraints>, racy_from: i128, old: &str) -> bool {
    let Some((mtime, len, ino)) = facts else {
        return old.is_empty();
    };
    let mut digits = itoa::Buffer::new();
    let rest = old
        .strip_prefix(digits.format(mtime))
        .and_then(|rest| rest.strip_prefix(':'))
        .and_then(|rest| rest.strip_prefix(digits.format(len)));
    #[cfg(unix)]
    let rest = rest
        .and_then(|rest| rest.strip_prefix(':'))
        .and_then(|rest| rest.strip_prefix(digits.format(ino)));
    #[cfg(not(unix))]
    let _ = ino;
    let racy = if mtime >= racy_from { "~" } else { "" };
    rest == Some(racy)
}

/// Takes the stamps of paths of a catalog (relative to its root).
///
/// On Unix, paths under `bundles/` are looked up from an open handle of that folder
/// (`fstatat`): the kernel walks fewer components than from `/`, and no path is joined. On a
/// 10,000-tool catalog that makes a stat about a quarter cheaper than `std::fs::metadata` of
/// the full path.
struct StampReader<'a> {
    root: &'a Path,
    racy_from: i128,
    #[cfg(unix)]
    bundles: Option<std::fs::File>,
}

impl<'a> StampReader<'a> {
    fn new(root: &'a Path, racy_from: i128) -> Self {
        Self {
            root,
            racy_from,
            // Without it (a folder that cannot be opened), paths are looked up in full.
            #[cfg(unix)]
            bundles: crate::base::capped::open_folder(&root.join(BUNDLES_DIR)).ok(),
        }
    }

    fn facts(&self, path: &str) -> Option<Constraints> {
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

/// The sub-folders of a folder (symbolic links to folders included), hidden ones left out.
fn subdirs(dir: &Path) -> HashSet<String> {
    // The entry's type comes with the listing on most filesystems: a stat only for a link.
    let is_dir = |e: &std::fs::DirEntry| match e.file_type() {
        Ok(kind) if !kind.is_symlink() => kind.is_dir(),
        _ => e.path().is_dir(),
    };
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .filter(is_dir)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| !n.starts_with('.'))
                .collect()
        })
        .unwrap_or_default()
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

    /// The folders of the bundles whose slug, bundleID or folder name is `name`, when this
    /// index's bundles are the catalog's as it is now: the same folders under `bundles/`, each
    /// `bundle.json` readable and as it was when read (its stamp; one stat a bundle, no file
    /// read). `None` when that cannot be told so cheaply: a bundle.json changed, unreadable or
    /// stamped too recently to trust, or a folder added or gone. Finding a bundle by slug then
    /// costs a stat per bundle rather than reading every bundle.json.
    pub(crate) fn fresh_bundle_dirs(&self, catalog: &Catalog, name: &str) -> Option<Vec<String>> {
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
        let folders = subdirs(&catalog.bundles_dir());
        if folders.len() != rows.len() {
            return None;
        }
        // No stamp is racy now: one stored as racy never matches.
        let stamps = StampReader::new(catalog.root(), i128::MAX);
        let mut found = Vec::new();
        for (dir, slug, id, stamp, problem) in rows {
            let file = format!("{BUNDLES_DIR}/{dir}/{BUNDLE_FILE}");
            if problem.is_some()
                || !folders.contains(&dir)
                || !stamp_is(stamps.facts(&file), i128::MAX, &stamp)
            {
                return None;
            }
            if [slug.as_deref(), id.as_deref(), Some(dir.as_str())].contains(&Some(name)) {
                found.push(dir);
            }
        }
        Some(found)
    }
}

/// The words of a tool's arguments, nested objects included, as three full-text columns:
/// their names (split into words), their descriptions, and the values they accept (`enum` and
/// `const`, of the argument and of its array `items`: a request often names the value a tool
/// accepts, "in celsius"). Defaults and examples are left out: they are what a tool would use,
/// not what it is about, and a request naming them is no hint.
#[derive(Debug, Default)]
struct ArgumentText {
    names: String,
    descriptions: String,
    values: String,
}

impl ArgumentText {
    fn of(schema: Option<&Value>) -> Self {
        let mut text = Self::default();
        text.add(schema, 0);
        text
    }

    fn add(&mut self, schema: Option<&Value>, depth: usize) {
        let Some(properties) = schema
            .and_then(|s| s.get("properties"))
            .and_then(Value::as_object)
        else {
            return;
        };
        for (name, spec) in properties {
            push_words(&mut self.names, &index_text(name));
            if let Some(text) = spec.get("description").and_then(Value::as_str) {
                push_words(&mut self.descriptions, text);
            }
            for accepting in [Some(spec), spec.get("items")].into_iter().flatten() {
                let values = accepting
                    .get("enum")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .chain(accepting.get("const"));
                for value in values {
                    match value {
                        Value::String(text) => push_words(&mut self.values, &index_text(text)),
                        Value::Number(_) | Value::Bool(_) => {
                            push_words(&mut self.values, &value.to_string())
                        }
                        _ => {}
                    }
                }
            }
            if depth < 3 {
                self.add(Some(spec), depth + 1);
                self.add(spec.get("items"), depth + 1);
            }
        }
    }
}

/// `words` added to `out`, space separated.
fn push_words(out: &mut String, words: &str) {
    if !out.is_empty() {
        out.push(' ');
    }
    out.push_str(words);
}

/// Execute a statement, prepared once per connection (the sync runs the same few statements
/// thousands of times).
fn execute_cached<P: rusqlite::Params>(
    tx: &Transaction,
    sql: &str,
    params: P,
) -> rusqlite::Result<usize> {
    tx.prepare_cached(sql)?.execute(params)
}

/// A time as nanoseconds since the epoch, so recency sorts as a number: the text form has no
/// fixed width (`…00Z` would sort after `…00.5Z`). Saturates outside 1677–2262.
fn epoch_ns(time: jiff::Timestamp) -> i64 {
    let ns = time.as_nanosecond();
    i64::try_from(ns).unwrap_or(if ns < 0 { i64::MIN } else { i64::MAX })
}

/// A tool's row and full-text entry, ready to write: made where the file is parsed (a loader
/// thread during a check), so the main thread, the only writer, only writes.
struct Record {
    tool_id: String,
    version: String,
    tags: String,
    is_enabled: bool,
    unavailable: Option<String>,
    modified_ns: i64,
    created_ns: i64,
    safe: bool,
    bare_name: String,
    qualified_name: String,
    /// The full-text columns ([`super::bm25f::COLUMNS`]): name, tags, args, arg_text,
    /// arg_values, description, bundle, ident, output.
    text: [String; 9],
    /// Its vector under the built-in model, as stored ([`super::vectors`]); empty if none.
    vector: Vec<u8>,
}

impl Record {
    fn new(entry: &ToolEntry) -> Self {
        let tool = &entry.tool;
        let args = ArgumentText::of(entry.doc.get("argSchema"));
        let output = ArgumentText::of(entry.doc.get("outputSchema"));
        let name = name_words(&tool.slug, &tool.display_name);
        let tags = index_text(&tool.tags.join(" "));
        let vector = super::vectors::stored_vector(&super::ToolText {
            name: name.clone(),
            description: tool.description.clone(),
            tags: tags.clone(),
            arg_names: args.names.clone(),
            arg_values: args.values.clone(),
        });
        Self {
            tool_id: tool.tool_id.to_string(),
            version: tool.version.clone(),
            tags: serde_json::to_string(&tool.tags).unwrap_or_else(|_| "[]".into()),
            is_enabled: entry.is_enabled,
            unavailable: entry.unavailable.clone(),
            modified_ns: epoch_ns(tool.modified_at),
            created_ns: epoch_ns(tool.created_at),
            safe: tool.is_safe(),
            bare_name: names::wanted(&entry.bundle_slug, &tool.slug, false),
            qualified_name: names::wanted(&entry.bundle_slug, &tool.slug, true),
            text: [
                name,
                tags,
                args.names,
                args.descriptions,
                args.values,
                // As written (the embedding scorers read it from here); FTS5 splits the words.
                tool.description.clone(),
                index_text(&entry.bundle_slug),
                joined_identifiers(&tool.slug)
                    .into_iter()
                    .chain(joined_identifiers(&tool.display_name))
                    .collect::<Vec<_>>()
                    .join(" "),
                // What it returns: its properties' names and descriptions.
                [output.names, output.descriptions].join(" "),
            ],
            vector,
        }
    }
}

/// Write one tool's row and full-text entry.
fn put_tool(
    tx: &Transaction,
    id: i64,
    record: &Record,
    stamp: &str,
    hash: Option<&str>,
) -> rusqlite::Result<()> {
    execute_cached(
        tx,
        "UPDATE tool SET stamp = ?2, content_hash = ?9, problem = NULL, tool_id = ?3, version = ?4,
                tags = ?5, is_enabled = ?6, unavailable = ?7, modified_ns = ?8, created_ns = ?10,
                safe = ?11, bare_name = ?12, qualified_name = ?13 WHERE id = ?1",
        params![
            id,
            stamp,
            record.tool_id,
            record.version,
            record.tags,
            record.is_enabled,
            record.unavailable,
            record.modified_ns,
            hash,
            record.created_ns,
            record.safe,
            record.bare_name,
            record.qualified_name,
        ],
    )?;
    execute_cached(tx, "DELETE FROM tool_fts WHERE rowid = ?1", [id])?;
    let [
        name,
        tags,
        args,
        arg_text,
        arg_values,
        description,
        bundle,
        ident,
        output,
    ] = &record.text;
    execute_cached(
        tx,
        "INSERT INTO tool_fts (rowid, name, tags, args, arg_text, arg_values, description, bundle, ident, output)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        params![
            id,
            name,
            tags,
            args,
            arg_text,
            arg_values,
            description,
            bundle,
            ident,
            output
        ],
    )?;
    // The pack of every vector is stale once one changes (see [`super::vectors`]).
    execute_cached(tx, "DELETE FROM vector_pack", [])?;
    if record.vector.is_empty() {
        execute_cached(tx, "DELETE FROM tool_vector WHERE id = ?1", [id])?;
    } else {
        execute_cached(
            tx,
            "INSERT OR REPLACE INTO tool_vector (id, vector) VALUES (?1, ?2)",
            params![id, record.vector],
        )?;
    }
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
    execute_cached(
        tx,
        "UPDATE tool SET stamp = ?2, content_hash = ?4, problem = ?3, tool_id = NULL,
                version = NULL, tags = '[]', is_enabled = 0, unavailable = NULL, modified_ns = 0,
                created_ns = 0, safe = 0, bare_name = NULL, qualified_name = NULL
         WHERE id = ?1",
        params![id, stamp, problem, hash],
    )?;
    execute_cached(tx, "DELETE FROM tool_fts WHERE rowid = ?1", [id])?;
    execute_cached(tx, "DELETE FROM tool_vector WHERE id = ?1", [id])?;
    execute_cached(tx, "DELETE FROM vector_pack", [])?;
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
    tx.execute(
        &format!("DELETE FROM tool_vector WHERE id IN (SELECT id FROM tool WHERE {condition})"),
        args,
    )?;
    tx.execute("DELETE FROM vector_pack", [])?;
    tx.execute(&format!("DELETE FROM tool WHERE {condition}"), args)
}

fn meta(tx: &rusqlite::Connection, key: &str) -> rusqlite::Result<String> {
    Ok(tx
        .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
        .optional()?
        .unwrap_or_default())
}

fn set_meta(tx: &Transaction, key: &str, value: &str) -> rusqlite::Result<()> {
    execute_cached(
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

/// A tool file to read.
struct Pending {
    id: i64,
    dir: String,
    slug: String,
    version: String,
    /// Its stamp now.
    now: String,
    /// The SHA-256 of the text indexed (none when the row must be read again whatever its
    /// text: its bundle or the hosts changed): the text is compared before it is parsed again.
    hash: Option<String>,
}

/// What became of a pending tool file.
enum Loaded {
    /// No tool: the file is gone, or its bundle is (its row says why).
    Gone,
    /// The same text as indexed.
    Same,
    /// Read again; with the text's hash.
    Read(Box<Result<Option<Record>, Problem>>, Option<String>),
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

/// Rows of the index read at a time (one query each) during a check.
const CHUNK: usize = 4096;

/// Rows whose stamps a worker compares at a time.
const BATCH: usize = 256;

/// Batches read ahead of the workers at most.
const QUEUE: usize = 8;

/// Rows of the index whose stamps are compared with the files' (on a worker).
#[derive(Default)]
struct Batch {
    rows: Vec<Row>,
    /// The rows' paths, stamps and hashes back to back.
    text: String,
    /// The rows whose stamps moved (see [`moved`]), with their stamps now.
    moved: Vec<(usize, String)>,
    /// Whether the rows are folders to list again when their stamps moved (on the worker,
    /// after the stamp is taken: a change after the listing moves the stamp again).
    list: bool,
    /// With `list`: the sub-folders of each moved row's folder, in `moved`'s order.
    listings: Vec<HashSet<String>>,
}

/// A row of a [`Batch`]: its id and where its parts end in the text.
struct Row {
    id: i64,
    start: usize,
    path: usize,
    stamp: usize,
    hash: Option<usize>,
}

impl Batch {
    fn push(&mut self, id: i64, path: &[&str], stamp: &str, hash: Option<&str>) {
        let start = self.text.len();
        path.iter().for_each(|part| self.text.push_str(part));
        let path = self.text.len();
        self.text.push_str(stamp);
        let stamp = self.text.len();
        let hash = hash.map(|hash| {
            self.text.push_str(hash);
            self.text.len()
        });
        self.rows.push(Row {
            id,
            start,
            path,
            stamp,
            hash,
        });
    }

    fn path(&self, i: usize) -> &str {
        &self.text[self.rows[i].start..self.rows[i].path]
    }

    fn stamp(&self, i: usize) -> &str {
        &self.text[self.rows[i].path..self.rows[i].stamp]
    }

    fn hash(&self, i: usize) -> Option<&str> {
        let row = &self.rows[i];
        row.hash.map(|end| &self.text[row.stamp..end])
    }

    /// Stat every row's path and note the rows whose stamps moved (see [`moved`]).
    fn compare(&mut self, stamper: &StampReader) {
        for i in 0..self.rows.len() {
            let (old, facts) = (self.stamp(i), stamper.facts(self.path(i)));
            if is_racy(old) || !stamp_is(facts, stamper.racy_from, old) {
                let mut now = String::new();
                write_stamp(facts, stamper.racy_from, &mut now);
                self.moved.push((i, now));
                if self.list {
                    self.listings
                        .push(subdirs(&stamper.root.join(self.path(i))));
                }
            }
        }
    }

    fn clear(&mut self) {
        self.rows.clear();
        self.text.clear();
        self.moved.clear();
        self.listings.clear();
    }
}

/// Read rows of the index with `sql` (parameters: the last rowid read, [`CHUNK`], then
/// `only`), a chunk at a time; `push` copies a row into a batch and gives its rowid. The
/// batches' stamps are compared on the pool while the next rows are read; `handle` gets each
/// batch once compared (in any order), between queries, so rows are never written while a
/// query reads them. It must write only the rows of the batch it gets. Gives the number of
/// rows compared.
fn scan(
    tx: &Transaction,
    pool: &mut Pool,
    sql: &str,
    only: &[&str],
    list: bool,
    push: impl Fn(&rusqlite::Row, &mut Batch) -> rusqlite::Result<i64>,
    mut handle: impl FnMut(&Batch) -> Result<(), SyncError>,
) -> Result<usize, SyncError> {
    let mut after = i64::MIN;
    let mut total = 0;
    loop {
        let mut read = 0;
        {
            let mut statement = tx.prepare_cached(sql)?;
            let (from, chunk) = (after, CHUNK as i64);
            let mut values: Vec<&dyn rusqlite::ToSql> = vec![&from, &chunk];
            values.extend(only.iter().map(|v| v as &dyn rusqlite::ToSql));
            let mut rows = statement.query(values.as_slice())?;
            let mut batch = pool.batch();
            batch.list = list;
            while let Some(row) = rows.next()? {
                after = push(row, &mut batch)?;
                read += 1;
                if batch.rows.len() == BATCH {
                    let mut next = pool.batch();
                    next.list = list;
                    pool.submit(std::mem::replace(&mut batch, next));
                }
            }
            pool.submit(batch);
        }
        total += read;
        while let Some(batch) = pool.next(false) {
            handle(&batch)?;
            pool.recycle(batch);
        }
        if read < CHUNK {
            break;
        }
    }
    while let Some(batch) = pool.next(true) {
        handle(&batch)?;
        pool.recycle(batch);
    }
    Ok(total)
}

/// Stat workers that live for a whole check, and the main thread with them. The main thread
/// reads rows and hands them over a batch at a time; the workers stat and compare while it reads
/// on. When they are behind (the queue is full), the main thread compares the batch itself, and
/// it takes queued batches itself while it waits for them: so there is one worker fewer than
/// cores, and every core stays busy without more threads than cores. A few rows (less than a
/// batch, before any worker started) are compared on the main thread alone. Only the main
/// thread writes to the index.
///
/// Not rayon (a dependency, used elsewhere): this is a pipeline, not a data-parallel loop. The
/// rows arrive a chunk at a time from a SQLite cursor on the main thread, which must go on
/// reading and must be the only one to write; the pool starts no thread at all for a catalog
/// smaller than one batch (most commands on small catalogs), applies back-pressure (a full
/// queue makes the main thread compare the batch itself), and reuses batches. A `par_iter`
/// needs the rows up front (one more copy of every stamp, the read no longer overlapped with
/// the stats) and rayon's global pool keeps a thread per core alive for the process.
/// Measured against a rayon version (each chunk's batches compared with `par_iter_mut`, the
/// rest unchanged) with `python3 bench/sync.py` at 100,000 tools (release, 2 cores, load 2.6,
/// median of 3): a rebuild 11.4 s with these threads, 11.35 s with rayon but 12.4 s of CPU
/// against 11.2; a change check that finds nothing 0.39 s against 0.45 s. No gain to pay
/// for the change.
struct Pool<'scope, 'env> {
    scope: &'scope std::thread::Scope<'scope, 'env>,
    stamper: &'env StampReader<'env>,
    jobs: Option<mpsc::SyncSender<Batch>>,
    queue: Option<Arc<Mutex<mpsc::Receiver<Batch>>>>,
    done: Option<mpsc::Receiver<Batch>>,
    /// Batches handed to the workers and not yet taken back.
    in_flight: usize,
    /// Batches compared on this thread.
    here: Vec<Batch>,
    /// Batches to use again.
    spare: Vec<Batch>,
}

impl<'scope, 'env> Pool<'scope, 'env> {
    fn new(
        scope: &'scope std::thread::Scope<'scope, 'env>,
        stamper: &'env StampReader<'env>,
    ) -> Self {
        Self {
            scope,
            stamper,
            jobs: None,
            queue: None,
            done: None,
            in_flight: 0,
            here: Vec::new(),
            spare: Vec::new(),
        }
    }

    fn batch(&mut self) -> Batch {
        self.spare.pop().unwrap_or_default()
    }

    fn recycle(&mut self, mut batch: Batch) {
        batch.clear();
        self.spare.push(batch);
    }

    fn submit(&mut self, mut batch: Batch) {
        if batch.rows.is_empty() {
            return self.recycle(batch);
        }
        if self.jobs.is_none() && batch.rows.len() == BATCH {
            self.start();
        }
        if let Some(jobs) = &self.jobs {
            match jobs.try_send(batch) {
                Ok(()) => {
                    self.in_flight += 1;
                    return;
                }
                // Full: the workers are behind. Disconnected: no worker left (one panicked;
                // the scope reports it).
                Err(mpsc::TrySendError::Full(back) | mpsc::TrySendError::Disconnected(back)) => {
                    batch = back;
                }
            }
        }
        self.compare_here(batch);
    }

    fn compare_here(&mut self, mut batch: Batch) {
        batch.compare(self.stamper);
        self.here.push(batch);
    }

    /// Start the workers: one per core but one (up to 7); none on a single core.
    fn start(&mut self) {
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(8);
        if threads < 2 {
            return;
        }
        let (jobs, queue) = mpsc::sync_channel::<Batch>(QUEUE);
        let (done_tx, done) = mpsc::channel();
        let queue = Arc::new(Mutex::new(queue));
        for _ in 1..threads {
            let (queue, done_tx, stamper) = (Arc::clone(&queue), done_tx.clone(), self.stamper);
            self.scope.spawn(move || {
                // One worker at a time waits for the next batch.
                while let Ok(Ok(mut batch)) = queue.lock().map(|q| q.recv()) {
                    batch.compare(stamper);
                    if done_tx.send(batch).is_err() {
                        break;
                    }
                }
            });
        }
        self.jobs = Some(jobs);
        self.queue = Some(queue);
        self.done = Some(done);
    }

    /// A compared batch; with `wait`, waits for one while any is in flight, comparing queued
    /// batches meanwhile.
    fn next(&mut self, wait: bool) -> Option<Batch> {
        if let Some(batch) = self.here.pop() {
            return Some(batch);
        }
        if self.in_flight == 0 {
            return None;
        }
        if wait {
            // A worker waiting for work holds the lock: then nothing is queued.
            let queued = self
                .queue
                .as_ref()
                .and_then(|queue| queue.try_lock().ok()?.try_recv().ok());
            if let Some(batch) = queued {
                self.in_flight -= 1;
                self.compare_here(batch);
                return self.here.pop();
            }
        }
        let done = self.done.as_ref()?;
        let batch = if wait {
            // An error: no worker left (one panicked; the scope reports it).
            done.recv().ok()
        } else {
            done.try_recv().ok()
        };
        match batch {
            Some(_) => self.in_flight -= 1,
            None if wait => self.in_flight = 0,
            None => {}
        }
        batch
    }
}

/// A slug folder changed: versions were added or removed (`present` now); make the rows match.
fn list_versions(
    tx: &Transaction,
    present: &HashSet<String>,
    dir: &str,
    slug: &str,
    slug_path: &str,
    slug_stamp: &str,
    report: &mut SyncReport,
) -> rusqlite::Result<()> {
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
        execute_cached(
            tx,
            "INSERT INTO tool (path, bundle_dir, slug_dir) VALUES (?1, ?2, ?3)",
            params![path, dir, slug],
        )?;
    }
    execute_cached(
        tx,
        "UPDATE slug_dir SET stamp = ?3 WHERE bundle_dir = ?1 AND slug = ?2",
        [dir, slug, slug_stamp],
    )?;
    Ok(())
}

/// How many tool files are read (on loader threads) before their rows are written.
const LOAD_BATCH: usize = 1024;

/// Reads changed tool files on loader threads, a batch at a time, while the main thread writes
/// what the batch before held: the parse of one batch overlaps the writes of the last.
struct Loader<'scope, 'env> {
    scope: &'scope std::thread::Scope<'scope, 'env>,
    catalog: &'env Catalog,
    /// Each bundle's `bundle.json` as read once, by folder (`None`: no usable bundle).
    bundles: HashMap<String, Option<Arc<BundleEntry>>>,
    /// Tool files waiting for a batch to fill.
    pending: Vec<Pending>,
    /// The batch being read, a part per thread.
    reading: Vec<std::thread::ScopedJoinHandle<'scope, Vec<(Pending, Loaded)>>>,
    /// Tool files in `reading`.
    in_reading: usize,
}

impl<'scope, 'env> Loader<'scope, 'env> {
    fn new(scope: &'scope std::thread::Scope<'scope, 'env>, catalog: &'env Catalog) -> Self {
        Self {
            scope,
            catalog,
            bundles: HashMap::new(),
            pending: Vec::new(),
            reading: Vec::new(),
            in_reading: 0,
        }
    }

    /// Tool files taken and not yet written.
    fn unwritten(&self) -> usize {
        self.pending.len() + self.in_reading
    }

    fn push(
        &mut self,
        tx: &Transaction,
        pending: Pending,
        report: &mut SyncReport,
    ) -> Result<(), SyncError> {
        self.pending.push(pending);
        if self.pending.len() >= LOAD_BATCH {
            self.flush(tx, report)?;
        }
        Ok(())
    }

    /// Start reading the pending files, then write the batch read before.
    fn flush(&mut self, tx: &Transaction, report: &mut SyncReport) -> Result<(), SyncError> {
        let before = std::mem::take(&mut self.reading);
        self.start();
        self.write(tx, before, report)
    }

    /// Read and write everything taken.
    fn finish(mut self, tx: &Transaction, report: &mut SyncReport) -> Result<(), SyncError> {
        self.flush(tx, report)?;
        let last = std::mem::take(&mut self.reading);
        self.write(tx, last, report)
    }

    fn start(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        self.in_reading = pending.len();
        if pending.is_empty() {
            return;
        }
        let mut needed = HashMap::new();
        for p in &pending {
            if !self.bundles.contains_key(&p.dir) {
                let loaded = self
                    .catalog
                    .load_bundle(&self.catalog.bundles_dir().join(&p.dir), &p.dir)
                    .ok()
                    .flatten()
                    .map(Arc::new);
                self.bundles.insert(p.dir.clone(), loaded);
            }
            if let Some(Some(bundle)) = self.bundles.get(&p.dir) {
                needed
                    .entry(p.dir.clone())
                    .or_insert_with(|| Arc::clone(bundle));
            }
        }
        let needed = Arc::new(needed);
        // The main thread writes meanwhile: one core fewer for reading.
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .clamp(2, 8)
            - 1;
        let part = pending.len().div_ceil(threads);
        let mut pending = pending.into_iter();
        loop {
            let files: Vec<Pending> = pending.by_ref().take(part).collect();
            if files.is_empty() {
                break;
            }
            let (catalog, bundles) = (self.catalog, Arc::clone(&needed));
            self.reading.push(self.scope.spawn(move || {
                files
                    .into_iter()
                    .map(|p| {
                        let loaded = load(catalog, &bundles, &p);
                        (p, loaded)
                    })
                    .collect()
            }));
        }
    }

    fn write(
        &self,
        tx: &Transaction,
        reading: Vec<std::thread::ScopedJoinHandle<'scope, Vec<(Pending, Loaded)>>>,
        report: &mut SyncReport,
    ) -> Result<(), SyncError> {
        for part in reading {
            let loaded = part
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            for (p, loaded) in loaded {
                let (id, now) = (p.id, p.now.as_str());
                match loaded {
                    Loaded::Gone => clear_tool(tx, id, now, None, None)?,
                    Loaded::Same => {
                        execute_cached(
                            tx,
                            "UPDATE tool SET stamp = ?2 WHERE id = ?1 AND stamp != ?2",
                            params![id, now],
                        )?;
                    }
                    Loaded::Read(result, hash) => {
                        report.read += 1;
                        let hash = hash.as_deref();
                        match *result {
                            Ok(Some(record)) => put_tool(tx, id, &record, now, hash)?,
                            Ok(None) => clear_tool(tx, id, now, None, hash)?,
                            Err(problem) => clear_tool(tx, id, now, Some(&problem.message), hash)?,
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

/// Read one changed tool file (on a loader thread).
fn load(catalog: &Catalog, bundles: &HashMap<String, Arc<BundleEntry>>, p: &Pending) -> Loaded {
    let Some(bundle) = bundles.get(&p.dir) else {
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
    let text = match read_tool_text(&path, catalog.root()) {
        Ok(Some(text)) => text,
        Ok(None) => return Loaded::Read(Box::new(Ok(None)), None),
        Err(problem) => return Loaded::Read(Box::new(Err(problem)), None),
    };
    // The same text as indexed (a file touched, checked out again, or written with the same
    // bytes): nothing to parse.
    let hash = content_hash(&text);
    if p.hash.as_ref() == Some(&hash) {
        return Loaded::Same;
    }
    let record = catalog
        .tool_from_text(bundle, &p.slug, &p.version, &path, &text, false)
        .map(|entry| Some(Record::new(&entry)));
    Loaded::Read(Box::new(record), Some(hash))
}

#[cfg(test)]
mod tests;
