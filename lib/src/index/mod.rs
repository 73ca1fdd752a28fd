//! The search index: an SQLite FTS5 database in `.toolctl/index.sqlite`, derived from the files.
//!
//! The JSON files are the truth; the index is a cache of them that any command may throw away
//! and rebuild. Every command that uses it first brings it up to date with a change check
//! ([`sync`]) that compares each file's stamp (mtime, size, inode) with the one indexed and
//! re-reads only what changed: folders are read again only when their own stamp moved, so new
//! and removed tools are found without listing unchanged folders. Writes through toolctl
//! refresh the bundle they touched while they hold the catalog lock. A missing, corrupt or
//! older-format index is rebuilt from the files.
//!
//! Ranking follows the catalog spec: prefix > whole word > fuzzy > recency, with BM25 inside a
//! tier. See [`search`] for the tiers and the fuzzy mechanism.

mod bm25f;
pub mod default_tools;
mod default_version;
mod list;
mod resolve;
mod rows;
mod search;
pub mod static_model;
mod sync;
#[cfg(test)]
mod tests;
pub mod text;
pub mod vectors;
mod verify;
pub mod watch;

pub use bm25f::{Shares, idf};
pub use default_version::Registration;
pub use rows::{Field, ToolRow, ToolText};
pub use search::{Filters, Hit, SearchRequest, SearchResults, Tier, Tiers};
pub use sync::SyncReport;

use crate::catalog::{self, Catalog, STATE_DIR};
use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The index file inside `.toolctl/`.
pub const INDEX_FILE: &str = "index.sqlite";

/// The layout version of the index; an index of another version is rebuilt. Raised also when
/// what the rows hold is computed otherwise, so that no row made by an older binary is kept
/// (9: each tool's vector under the built-in semantic model, [`static_model::MODEL_ID`]; a new
/// model is a new format; 10: the vectors' pack).
pub const FORMAT_VERSION: i32 = 10;

/// Errors of the index. Anything wrong with the database itself leads to a rebuild, so what
/// reaches a user is a catalog error or a bad query.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Catalog(#[from] catalog::Error),
    #[error("search index {path}: {source}")]
    Database {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    /// A search without words.
    #[error("the search query is empty")]
    EmptyQuery,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The full-text tokenizer (as a macro, to go into [`SCHEMA`]): words of letters and digits,
/// case and diacritics folded, Porter stems.
macro_rules! tokenizer {
    () => {
        "porter unicode61 remove_diacritics 2"
    };
}

/// The same, for SQL made at run time.
const TOKENIZER: &str = tokenizer!();

const SCHEMA: &str = concat!(
    "
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE bundle (
    dir TEXT PRIMARY KEY,          -- folder name under bundles/ ('builtin' for the built-in one)
    bundle_id TEXT,
    slug TEXT,
    is_enabled INTEGER NOT NULL DEFAULT 0,
    is_deleted INTEGER NOT NULL DEFAULT 0,
    problem TEXT,                  -- why bundle.json cannot be used (its tools are left out)
    file_stamp TEXT NOT NULL DEFAULT '',
    tools_stamp TEXT NOT NULL DEFAULT ''
);
CREATE TABLE slug_dir (
    bundle_dir TEXT NOT NULL,
    slug TEXT NOT NULL,
    stamp TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (bundle_dir, slug)
);
CREATE TABLE tool (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,     -- relative to the catalog ('builtin:<slug>' for built-ins)
    bundle_dir TEXT NOT NULL,
    slug_dir TEXT NOT NULL,
    stamp TEXT NOT NULL DEFAULT '',
    content_hash TEXT,             -- SHA-256 of the text indexed (NULL: read it again whatever it holds)
    problem TEXT,                  -- why the file cannot be used (then the rest is empty)
    tool_id TEXT,
    version TEXT,
    tags TEXT NOT NULL DEFAULT '[]',
    is_enabled INTEGER NOT NULL DEFAULT 0,
    unavailable TEXT,
    modified_ns INTEGER NOT NULL DEFAULT 0, -- modifiedAt, nanoseconds since the epoch
    created_ns INTEGER NOT NULL DEFAULT 0,  -- createdAt: registration order, and which version is the default
    safe INTEGER NOT NULL DEFAULT 0,        -- pick shows it unless unsafe tools are allowed (Tool::is_safe)
    -- The exported names its slug asks for, alone and after its bundle's slug
    -- (provider::names::wanted): which tools a shown tool's name could collide with is then
    -- an indexed lookup, not a pass over the catalog.
    bare_name TEXT,
    qualified_name TEXT
);
CREATE INDEX tool_by_bundle ON tool (bundle_dir, slug_dir);
CREATE INDEX tool_problems ON tool (problem) WHERE problem IS NOT NULL;
CREATE INDEX bundle_by_slug ON bundle (slug);
CREATE VIRTUAL TABLE tool_fts USING fts5(
    name, tags, args, arg_text, arg_values, description, bundle, ident, output,
    tokenize = '",
    tokenizer!(),
    "',
    prefix = '2 3'
);
CREATE VIRTUAL TABLE tool_vocab USING fts5vocab(tool_fts, 'row');
CREATE TABLE tool_vector (
    id INTEGER PRIMARY KEY,        -- the tool's row
    vector BLOB NOT NULL           -- vectors::quantize of its text's vector
);
-- Every vector of tool_vector in one row, made by the first search that needs it and emptied
-- by each write of tool_vector (index/sync.rs), so a search reads one row, not one a tool.
CREATE TABLE vector_pack (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    rows BLOB NOT NULL,            -- the rows, 8 bytes each (little-endian), in order
    vectors BLOB NOT NULL          -- their vectors in the same order, all of one width
);
"
);

/// The indexes of the tool table for lookups after a check (the check itself does not use
/// them), as (name, what it indexes). A full build drops them first and makes them again at the
/// end: one sort each instead of an insert per tool in random order.
const LOOKUP_INDEXES: [(&str, &str); 5] = [
    ("tool_by_id", "tool (tool_id)"),
    ("tool_by_slug", "tool (slug_dir)"),
    ("tool_by_registration", "tool (created_ns, tool_id)"),
    ("tool_by_bare_name", "tool (bare_name)"),
    ("tool_by_qualified_name", "tool (qualified_name)"),
];

/// SQL that makes (or drops) the [`LOOKUP_INDEXES`].
fn lookup_indexes(make: bool) -> String {
    LOOKUP_INDEXES
        .iter()
        .map(|(name, on)| {
            if make {
                format!("CREATE INDEX {name} ON {on};")
            } else {
                format!("DROP INDEX {name};")
            }
        })
        .collect()
}

/// How much of the index file SQLite maps into memory: all of it up to ~12,000 tools. The
/// pages are the kernel's page cache, shared by every process, but a process's resident size
/// counts the mapped pages it touched: capped so that a search of a 100,000-tool index
/// (170 MB) stays under 64 MB (40 MiB gave 66 MB); pages past the cap are read one at a time.
const MMAP_SIZE: i64 = 24 << 20;

/// How long a connection waits for another process's lock on the index.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// An open, up-to-date index.
#[derive(Debug)]
pub struct Index {
    conn: Connection,
    path: Option<PathBuf>,
    /// The next sync builds the whole index (see [`for_a_build`](Self::for_a_build)).
    building: bool,
    /// Records the file's stamp once `conn` has closed, when toolctl trusts the file (see
    /// [`verify`]). After `conn`: fields drop in order.
    stamp: verify::StampOnClose,
}

/// What `index status` shows.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    pub path: Option<PathBuf>,
    pub format_version: i32,
    pub tools: u64,
    pub bundles: u64,
    pub problems: u64,
    pub size_bytes: u64,
    pub last_sync: SyncReport,
    /// The catalog's watcher, when one runs.
    pub watcher: Option<watch::Status>,
}

impl Index {
    /// The file this index is kept in; `None` for one in memory (a read-only catalog's, when
    /// no cache folder could hold it).
    pub fn stored_at(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The index file of a catalog.
    pub fn file(catalog: &Catalog) -> PathBuf {
        catalog.root().join(STATE_DIR).join(INDEX_FILE)
    }

    /// Open the catalog's index and bring it up to date with the files. A catalog that does not
    /// exist on disk gets an in-memory index (reads never create a catalog). An index that
    /// cannot be used (corrupt, another format, not a database) is deleted and rebuilt.
    /// `progress(done, total)` is called while files are read.
    pub fn open(
        catalog: &Catalog,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<(Self, SyncReport)> {
        let exists = catalog.root().is_dir();
        let unwritable = exists.then(|| unwritable_state(catalog)).flatten();
        if let Some(why) = &unwritable {
            // A catalog whose index this process cannot write (a read-only mount, another
            // user's tree, a link out) is still read: from an index in the user's cache
            // folder, else in memory.
            if let Some(path) = cache_file(catalog)
                && let Ok(opened) = Self::open_at(catalog, &path, progress)
            {
                catalog.check_note().index_in_cache(&path, why);
                return Ok(opened);
            }
            catalog.check_note().index_in_memory(why);
        }
        if !exists || unwritable.is_some() {
            // Reads never create a catalog.
            let mut index = Self::create(Connection::open_in_memory(), None)?;
            let report = index.sync(catalog, progress)?;
            return Ok((index, report));
        }
        match Self::open_at(catalog, &Self::file(catalog), progress) {
            // A full disk blocks no read: the index is built in memory for this command, as
            // for a catalog that cannot be written.
            Err(Error::Database { path, source }) if is_disk_full(&path, &source) => {
                catalog.check_note().index_in_memory(&format!(
                    "no space is left on the disk of {}",
                    catalog.root().display()
                ));
                let mut index = Self::create(Connection::open_in_memory(), None)?;
                let report = index.sync(catalog, progress)?;
                Ok((index, report))
            }
            other => other,
        }
    }

    /// [`open`](Self::open) with the index file at `path`.
    fn open_at(
        catalog: &Catalog,
        path: &Path,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<(Self, SyncReport)> {
        let path = path.to_owned();
        let mut existed = path.exists();
        // A file changed behind toolctl's back is checked whole first (see [`verify`]).
        if existed && !verify::is_as_left(&path) && !verify::integrity_check_passes(&path) {
            remove_index_files(&path);
            existed = false;
        }
        let attempt = Self::open_file(&path).and_then(|mut index| {
            if !existed {
                index.for_a_build()?;
            }
            let mut report = index.sync(catalog, progress)?;
            report.rebuilt = !existed;
            Ok((index.trusted(), report))
        });
        match attempt {
            Err(Error::Database { source, .. }) if is_damaged(&path, &source) => {
                // Derived state: start again from the files.
                remove_index_files(&path);
                let mut index = Self::open_file(&path)?;
                index.for_a_build()?;
                let mut report = index.sync(catalog, progress)?;
                report.rebuilt = true;
                Ok((index.trusted(), report))
            }
            other => other,
        }
    }

    /// Open the index (as [`open`](Self::open) does) and run `read` on it. Damage the change
    /// check cannot see (a corrupt page of the full-text tables, read only by a query) is
    /// repaired too: when `read` finds the index unusable, it is rebuilt and `read` runs again.
    pub fn read<T>(
        catalog: &Catalog,
        progress: &mut dyn FnMut(usize, usize),
        mut read: impl FnMut(&Self) -> Result<T>,
    ) -> Result<T> {
        let (index, _) = Self::open(catalog, progress)?;
        match read(&index) {
            Err(Error::Database { source, .. })
                if index
                    .path
                    .as_deref()
                    .is_some_and(|path| is_damaged(path, &source)) =>
            {
                drop(index);
                let (index, _) = Self::rebuild(catalog, progress)?;
                read(&index)
            }
            other => other,
        }
    }

    /// Give a connection that is about to index every file a page cache that holds the whole
    /// build (up to 128 MiB): FTS5 then writes its b-trees once instead of evicting and reading
    /// pages back (a 100,000-tool build: 21 s → 14 s). Other commands keep SQLite's default
    /// 2 MiB cache, so a search stays small in memory.
    ///
    /// The next sync also leaves out the [`LOOKUP_INDEXES`] until it has written every row.
    fn for_a_build(&mut self) -> Result<()> {
        self.building = true;
        self.conn
            .pragma_update(None, "cache_size", -131_072i64)
            .map_err(|e| self.db_error(e))
    }

    /// Open the index only if it exists, without a sync: for a write that refreshes what it
    /// touched (building a whole index is a read's job, never a write's).
    pub fn open_existing(catalog: &Catalog) -> Option<Self> {
        let path = Self::file(catalog);
        if !path.is_file() {
            return None;
        }
        let index = Self::open_file(&path).ok()?;
        // Its stamp is recorded after the write only when the file was as toolctl left it;
        // otherwise the next read checks it.
        Some(if verify::is_as_left(&path) {
            index.trusted()
        } else {
            index
        })
    }

    /// Open the catalog's index as it is, without the change check: for a reader that must
    /// answer at once and runs the check right after (`mcp serve`'s first `tools/list`), so
    /// what it reads may be older than the tool files. Only an index toolctl can trust as it
    /// is: one that exists, in this format, in a catalog this process may write, with the
    /// stamp toolctl recorded when it last left it (a file changed behind its back is checked
    /// whole by [`open`](Self::open) first), and in step with `toolctl.json` as it is now (the
    /// built-in tools' flags, the hosts availability depends on: a few rows, compared).
    /// `None` otherwise: [`open`](Self::open) then does it all.
    pub fn open_unchecked(catalog: &Catalog) -> Option<Self> {
        let path = Self::file(catalog);
        if !path.is_file() || unwritable_state(catalog).is_some() || !verify::is_as_left(&path) {
            return None;
        }
        let index = Self::open_file(&path).ok()?;
        index
            .config_in_step(catalog)
            .is_ok_and(|in_step| in_step)
            .then_some(index)
    }

    /// The file is one toolctl trusts (it built it, checked it, or found it as it left it):
    /// record its stamp now and when the connection closes.
    fn trusted(mut self) -> Self {
        if let Some(path) = &self.path {
            verify::record(path);
            self.stamp = verify::StampOnClose(Some(path.clone()));
        }
        self
    }

    /// Delete the index and build it again from the files.
    pub fn rebuild(
        catalog: &Catalog,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<(Self, SyncReport)> {
        remove_index_files(&Self::file(catalog));
        if unwritable_state(catalog).is_some()
            && let Some(path) = cache_file(catalog)
        {
            remove_index_files(&path);
        }
        let (index, mut report) = Self::open(catalog, progress)?;
        report.rebuilt = true;
        Ok((index, report))
    }

    fn open_file(path: &Path) -> Result<Self> {
        if let Some(dir) = path.parent() {
            catalog::store::create_state_dir(dir)?;
        }
        catalog::store::refuse_link_out(path)?;
        crate::base::state_db::drop_link(path);
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags);
        Self::create(conn, Some(path.to_owned()))
    }

    /// Set up a connection: check the format, create the schema in a new database.
    fn create(conn: rusqlite::Result<Connection>, path: Option<PathBuf>) -> Result<Self> {
        let db = |source| Error::Database {
            path: path.clone().unwrap_or_else(|| PathBuf::from(":memory:")),
            source,
        };
        let conn = conn.map_err(db)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(db)?;
        if path.is_some() {
            // WAL: searches read while another process updates.
            crate::base::state_db::enable_wal(&conn, BUSY_TIMEOUT).map_err(db)?;
            conn.pragma_update(None, "synchronous", "NORMAL")
                .map_err(db)?;
            // Read pages straight from the page cache instead of copying each into SQLite's
            // own (a fresh process has none): a search at 10,000 tools touches ~1,200 pages,
            // one pread each otherwise.
            conn.pragma_update(None, "mmap_size", MMAP_SIZE)
                .map_err(db)?;
        }
        let state = |conn: &Connection| -> rusqlite::Result<(i32, i64)> {
            Ok((
                conn.query_row("PRAGMA user_version", [], |row| row.get(0))?,
                conn.query_row("SELECT count(*) FROM sqlite_master", [], |row| row.get(0))?,
            ))
        };
        let (mut version, tables) = state(&conn).map_err(db)?;
        if tables == 0 {
            // Several processes may find no index at once: the first to take the write lock
            // creates the schema, whole (the schema and its format version in one
            // transaction, so no reader sees tables without their version); the others find
            // it made.
            conn.execute_batch("BEGIN IMMEDIATE").map_err(db)?;
            let created = state(&conn).and_then(|(v, tables)| {
                if tables == 0 {
                    conn.execute_batch(SCHEMA)?;
                    conn.execute_batch(&lookup_indexes(true))?;
                    conn.pragma_update(None, "user_version", FORMAT_VERSION)?;
                    Ok(FORMAT_VERSION)
                } else {
                    Ok(v)
                }
            });
            match created {
                Ok(v) => {
                    conn.execute_batch("COMMIT").map_err(db)?;
                    version = v;
                }
                Err(e) => {
                    let _ = conn.execute_batch("ROLLBACK");
                    return Err(db(e));
                }
            }
        }
        if version != FORMAT_VERSION {
            return Err(db(rusqlite::Error::InvalidParameterName(format!(
                "index format {version}, this toolctl uses {FORMAT_VERSION}"
            ))));
        }
        Ok(Self {
            conn,
            path,
            building: false,
            stamp: verify::StampOnClose(None),
        })
    }

    fn db_error(&self, source: rusqlite::Error) -> Error {
        Error::Database {
            path: self
                .path
                .clone()
                .unwrap_or_else(|| PathBuf::from(":memory:")),
            source,
        }
    }

    /// Where the tool with this toolID is stored, if the index knows it.
    pub fn path_of_tool_id(&self, tool_id: &str) -> Result<Option<String>> {
        use rusqlite::OptionalExtension;
        self.conn
            .query_row(
                "SELECT path FROM tool WHERE tool_id = ?1 ORDER BY path LIMIT 1",
                [tool_id],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.db_error(e))
    }

    /// The files the index could not use, with why.
    pub fn problems(&self, catalog: &Catalog) -> Result<Vec<catalog::Problem>> {
        let mut statement = self
            .conn
            .prepare(
                // Without INDEXED BY, SQLite walks every tool in path order for the ORDER BY
                // (37% of a search at 10,000 tools) instead of the few with problems.
                "SELECT path, problem FROM tool INDEXED BY tool_problems WHERE problem IS NOT NULL
                 UNION ALL SELECT 'bundles/' || dir || '/bundle.json', problem FROM bundle WHERE problem IS NOT NULL
                 ORDER BY 1",
            )
            .map_err(|e| self.db_error(e))?;
        let rows = statement
            .query_map([], |row| {
                Ok(catalog::Problem {
                    path: catalog.root().join(row.get::<_, String>(0)?),
                    message: row.get(1)?,
                })
            })
            .map_err(|e| self.db_error(e))?;
        let mut problems: Vec<catalog::Problem> = rows
            .collect::<rusqlite::Result<_>>()
            .map_err(|e| self.db_error(e))?;
        problems.extend(self.folder_problems(catalog)?);
        problems.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(problems)
    }

    /// Folders the catalog needs that are something else ([`catalog::not_a_folder`]): `bundles`,
    /// or the `tools` of a bundle. Only bundles the index holds no slug folder of are looked at
    /// (a `tools` that is not a folder lists none), so a read costs a stat or two, not one per
    /// bundle. Readers that say nothing of unreadable files (pick, attach) still warn of these:
    /// without them a whole bundle is missing from what they choose from.
    pub fn folder_problems(&self, catalog: &Catalog) -> Result<Vec<catalog::Problem>> {
        let bundles = catalog.bundles_dir();
        if let Some(problem) = catalog::not_a_folder(&bundles) {
            return Ok(vec![problem]);
        }
        let mut statement = self
            .conn
            .prepare_cached(
                "SELECT dir FROM bundle b WHERE dir != ?1
                 AND NOT EXISTS (SELECT 1 FROM slug_dir s WHERE s.bundle_dir = b.dir)",
            )
            .map_err(|e| self.db_error(e))?;
        let dirs = statement
            .query_map([sync::BUILTIN_DIR], |row| row.get::<_, String>(0))
            .and_then(Iterator::collect::<rusqlite::Result<Vec<String>>>)
            .map_err(|e| self.db_error(e))?;
        Ok(dirs
            .iter()
            .filter_map(|dir| catalog::not_a_folder(&bundles.join(dir).join(catalog::TOOLS_DIR)))
            .collect())
    }

    /// The index's size: its pages times the page size, what the file holds once its
    /// write-ahead log is checkpointed. (The file's length alone is not it: right after a
    /// rebuild most pages are still in the log, and the file is one page long.) 0 in memory.
    fn size_bytes(&self) -> Result<u64> {
        if self.path.is_none() {
            return Ok(0);
        }
        self.conn
            .query_row(
                "SELECT c.page_count * s.page_size FROM pragma_page_count() c, pragma_page_size() s",
                [],
                |row| row.get::<_, i64>(0),
            )
            .map(|n| n.max(0) as u64)
            .map_err(|e| self.db_error(e))
    }

    /// Counts and size for `index status`; `problems` counts what [`problems`](Self::problems)
    /// lists, folder problems (a `bundles` or a bundle's `tools` that is not a folder) included.
    pub fn status(&self, catalog: &Catalog, last_sync: SyncReport) -> Result<Status> {
        let count = |sql: &str| -> Result<u64> {
            self.conn
                .query_row(sql, [], |row| row.get::<_, i64>(0))
                .map(|n| n as u64)
                .map_err(|e| self.db_error(e))
        };
        Ok(Status {
            path: self.path.clone(),
            format_version: FORMAT_VERSION,
            // What the lists can show: usable tools of usable bundles.
            tools: count(
                "SELECT count(*) FROM tool t JOIN bundle b ON b.dir = t.bundle_dir
                 WHERE t.tool_id IS NOT NULL AND b.bundle_id IS NOT NULL AND b.problem IS NULL",
            )?,
            bundles: count(
                "SELECT count(*) FROM bundle WHERE bundle_id IS NOT NULL AND problem IS NULL",
            )?,
            problems: count(
                "SELECT (SELECT count(*) FROM tool WHERE problem IS NOT NULL) + (SELECT count(*) FROM bundle WHERE problem IS NOT NULL)",
            )? + self.folder_problems(catalog)?.len() as u64,
            size_bytes: self.size_bytes()?,
            last_sync,
            // The index lives in <root>/.toolctl/.
            watcher: self
                .path
                .as_ref()
                .and_then(|p| p.parent()?.parent())
                .and_then(watch::status),
        })
    }
}

/// Whether SQLite refused the index at `path` because its disk is full: `SQLITE_FULL`, or an
/// I/O error (a WAL's shared memory that cannot grow) on a file system with no space left.
pub fn is_disk_full(path: &Path, error: &rusqlite::Error) -> bool {
    match error.sqlite_error_code() {
        Some(rusqlite::ErrorCode::DiskFull) => true,
        Some(rusqlite::ErrorCode::SystemIoFailure) => no_space_left(path),
        _ => false,
    }
}

/// Whether the file system holding `path` (or its folder) has no block left for this user.
#[cfg(unix)]
fn no_space_left(path: &Path) -> bool {
    let dir = path.parent().unwrap_or(path);
    rustix::fs::statvfs(dir).is_ok_and(|s| s.f_bavail == 0)
}

#[cfg(not(unix))]
fn no_space_left(_: &Path) -> bool {
    false
}

/// Whether an error means the index file itself cannot be used (so it is rebuilt), rather than
/// a passing condition such as another process holding the write lock.
fn is_unusable(error: &rusqlite::Error) -> bool {
    use rusqlite::ErrorCode::{CannotOpen, DatabaseCorrupt, NotADatabase, SchemaChanged};
    match error {
        rusqlite::Error::SqliteFailure(e, message) => {
            matches!(
                e.code,
                DatabaseCorrupt | NotADatabase | CannotOpen | SchemaChanged
            ) || message.as_deref().is_some_and(|m| {
                m.contains("no such table")
                        || m.contains("no such column")
                        // FTS5's tables cannot be read: one of its pages is damaged.
                        || m.contains("vtable constructor failed")
            })
        }
        // A table or column the code expects is missing: another layout.
        rusqlite::Error::InvalidColumnName(_) | rusqlite::Error::InvalidColumnIndex(_) => true,
        // A value of a type the index never writes: a damaged record.
        rusqlite::Error::FromSqlConversionFailure(..)
        | rusqlite::Error::InvalidColumnType(..)
        | rusqlite::Error::IntegralValueOutOfRange(..)
        | rusqlite::Error::Utf8Error(..) => true,
        rusqlite::Error::InvalidParameterName(text) => text.starts_with("index format"),
        _ => false,
    }
}

/// Where the index of a catalog this process cannot write is kept:
/// `index.sqlite` in the user's cache folder of the catalog ([`catalog::state::cache_dir`]).
fn cache_file(catalog: &Catalog) -> Option<PathBuf> {
    Some(catalog::state::cache_dir(catalog.root())?.join(INDEX_FILE))
}

/// Why this process may not write the catalog's index, if it may not
/// ([`catalog::state::unwritable`]).
fn unwritable_state(catalog: &Catalog) -> Option<String> {
    catalog::state::unwritable(catalog.root(), &Index::file(catalog))
}

/// Whether the index at `path` must be rebuilt after `error`: an error that says so itself, or
/// any other failure of the database (a damaged page can surface as almost any error, or as a
/// value of the wrong type) when `PRAGMA quick_check` then finds the file damaged. A busy or
/// read-only database is not damaged.
fn is_damaged(path: &Path, error: &rusqlite::Error) -> bool {
    use rusqlite::ErrorCode::{
        ConstraintViolation, DatabaseBusy, DatabaseLocked, DiskFull, ReadOnly,
    };
    // The index only ever writes rows that meet its constraints: a broken one is a damaged
    // b-tree (which quick_check does not compare with its table).
    if is_unusable(error) || error.sqlite_error_code() == Some(ConstraintViolation) {
        return true;
    }
    if matches!(
        error.sqlite_error_code(),
        Some(DatabaseBusy | DatabaseLocked | ReadOnly | DiskFull)
    ) || is_disk_full(path, error)
    {
        // A passing condition, not damage: the file is kept (a full disk's index is good
        // once there is room again).
        return false;
    }
    !quick_check_passes(path)
}

/// `PRAGMA quick_check` on its own read-only connection: `true` only when it answers "ok".
fn quick_check_passes(path: &Path) -> bool {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let Ok(conn) = Connection::open_with_flags(path, flags) else {
        return false;
    };
    let _ = conn.busy_timeout(BUSY_TIMEOUT);
    conn.query_row("PRAGMA quick_check(1)", [], |row| row.get::<_, String>(0))
        .is_ok_and(|answer| answer == "ok")
}

/// Remove the index, SQLite's side files and the index's stamp.
fn remove_index_files(path: &Path) {
    for suffix in ["", "-wal", "-shm", ".stamp"] {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        let _ = catalog::store::remove_file(Path::new(&name));
    }
}
