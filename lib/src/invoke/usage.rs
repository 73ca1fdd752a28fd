//! Usage metrics of tools (`callCount`, `lastCalledAt`), kept in `.toolctl/usage.sqlite`, never
//! in `tool.json` (the catalog is kept in git; calls must not dirty it).
//!
//! A small database of its own, not the search index: recording a call must not pay for the
//! index's change check, and concurrent calls (a batch, several processes) update counts
//! safely through SQLite's locking. Recording is best effort: a failure to record never fails
//! the call it counts.

use crate::catalog::{Catalog, STATE_DIR};
use rusqlite::{Connection, OptionalExtension};
use std::path::PathBuf;
use std::time::Duration;

/// The usage file of a catalog.
pub fn file(catalog: &Catalog) -> PathBuf {
    catalog.root().join(STATE_DIR).join("usage.sqlite")
}

/// How often a tool was called and when last.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    pub call_count: u64,
    pub last_called_at: Option<String>,
}

fn open(catalog: &Catalog, create: bool) -> rusqlite::Result<Option<Connection>> {
    let path = file(catalog);
    if !create && !path.is_file() {
        return Ok(None);
    }
    // A database that a symlink puts outside the catalog is not written: no count.
    if crate::catalog::store::refuse_link_out(&path).is_err() {
        return Ok(None);
    }
    // WAL: concurrent calls commit without waiting on each other's fsync (two calls of a
    // batch may create the file together). Counts are best effort: no fsync per call (a
    // power cut may lose the last few).
    let conn = crate::base::state_db::open(&path, create, Duration::from_secs(5), "OFF")?;
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS usage (
            tool_id TEXT PRIMARY KEY,
            call_count INTEGER NOT NULL,
            last_called_at TEXT NOT NULL
        )",
    )?;
    Ok(Some(conn))
}

/// Count one call of `tool_id` now. Best effort: the catalog must exist on disk (a read-only
/// use of a catalog that was never created creates nothing), and errors are dropped.
pub fn record(catalog: &Catalog, tool_id: &str) {
    if !catalog.root().is_dir() {
        return;
    }
    // One connection a process for the calls of a batch (opening one, with its WAL pragmas,
    // cost more than the count itself), kept for the last catalog counted in while its file
    // is the one opened (the same inode: a file removed or replaced since is opened anew).
    type Open = (std::path::PathBuf, Option<u64>, Connection);
    static OPEN: std::sync::Mutex<Option<Open>> = std::sync::Mutex::new(None);
    #[cfg(unix)]
    let inode = |path: &std::path::Path| {
        std::fs::symlink_metadata(path)
            .ok()
            .map(|m| std::os::unix::fs::MetadataExt::ino(&m))
    };
    #[cfg(not(unix))]
    let inode = |path: &std::path::Path| path.is_file().then_some(0);
    let mut open_now = OPEN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let counted = (|| -> rusqlite::Result<()> {
        let path = file(catalog);
        let now = inode(&path);
        if open_now
            .as_ref()
            .is_none_or(|(at, was, _)| *at != path || now.is_none() || *was != now)
        {
            crate::catalog::store::create_state_dir(&catalog.root().join(STATE_DIR))
                .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
            *open_now = open(catalog, true)?.map(|conn| (path.clone(), inode(&path), conn));
        }
        let Some((_, _, conn)) = open_now.as_ref() else {
            return Ok(());
        };
        conn.execute(
            "INSERT INTO usage (tool_id, call_count, last_called_at) VALUES (?1, 1, ?2)
             ON CONFLICT (tool_id) DO UPDATE SET call_count = call_count + 1,
                 last_called_at = excluded.last_called_at",
            [tool_id, &jiff::Timestamp::now().to_string()],
        )?;
        Ok(())
    })();
    if counted.is_err() {
        // Opened anew by the next count.
        *open_now = None;
    }
}

/// The usage of `tool_id`; zero calls when there is no record (or it cannot be read).
pub fn for_tool(catalog: &Catalog, tool_id: &str) -> Usage {
    let found = open(catalog, false).ok().flatten().and_then(|conn| {
        conn.query_row(
            "SELECT call_count, last_called_at FROM usage WHERE tool_id = ?1",
            [tool_id],
            |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)),
        )
        .optional()
        .ok()
        .flatten()
    });
    match found {
        Some((count, last)) => Usage {
            call_count: u64::try_from(count).unwrap_or(0),
            last_called_at: Some(last),
        },
        None => Usage {
            call_count: 0,
            last_called_at: None,
        },
    }
}
