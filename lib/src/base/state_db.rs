//! The SQLite databases toolctl keeps as derived state under `.toolctl/` (the search index, the
//! embeddings cache, the usage counts): one way to open them, in WAL mode (readers never wait
//! for a writer, writers do not wait on each other's fsync).

use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Open the database at `path` read-write for this thread (`create`: make it when missing),
/// waiting up to `busy` for another connection's lock, switched to WAL (see [`enable_wal`])
/// with `PRAGMA synchronous` set to `synchronous` (`"NORMAL"`, `"OFF"`).
pub fn open(
    path: &Path,
    create: bool,
    busy: Duration,
    synchronous: &str,
) -> rusqlite::Result<Connection> {
    drop_link(path);
    let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    if create {
        flags |= OpenFlags::SQLITE_OPEN_CREATE;
    }
    let conn = Connection::open_with_flags(path, flags)?;
    conn.busy_timeout(busy)?;
    enable_wal(&conn, busy)?;
    conn.pragma_update(None, "synchronous", synchronous)?;
    Ok(conn)
}

/// A symlink where a state database goes is not toolctl's: it is removed, never written
/// through (SQLite follows a link in a database's name, so a link to a catalog file such as
/// `bundles/NOTES` would have its pages written there). The database is then made anew.
pub fn drop_link(path: &Path) {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        let _ = std::fs::remove_file(path);
    }
}

/// Switch `conn` to WAL. Switching a new database file takes an exclusive lock without
/// SQLite's busy handler, so connections that create the file at once get `SQLITE_BUSY` here:
/// wait (1 ms, doubling up to 25 ms) and try again, for up to `wait`.
pub fn enable_wal(conn: &Connection, wait: Duration) -> rusqlite::Result<()> {
    let started = Instant::now();
    let mut pause = Duration::from_millis(1);
    loop {
        match conn.pragma_update(None, "journal_mode", "WAL") {
            Err(e) if is_busy(&e) && started.elapsed() < wait => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(25));
            }
            other => return other,
        }
    }
}

/// Whether `error` says the database file itself is unusable (not a database, damaged), so
/// state derived from elsewhere is best made again.
pub fn is_damaged(error: &rusqlite::Error) -> bool {
    matches!(
        error.sqlite_error_code(),
        Some(rusqlite::ErrorCode::NotADatabase | rusqlite::ErrorCode::DatabaseCorrupt)
    )
}

/// Remove the database at `path` with its WAL side files; what is not there is no error.
pub fn remove(path: &Path) -> std::io::Result<()> {
    for suffix in ["", "-wal", "-shm"] {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        match std::fs::remove_file(PathBuf::from(name)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
    }
    Ok(())
}

/// Whether SQLite refused because another connection holds a lock.
pub fn is_busy(error: &rusqlite::Error) -> bool {
    matches!(
        error.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_new_file_opens_in_wal_mode_and_a_missing_one_is_not_made_without_create() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.db");
        assert!(super::open(&path, false, std::time::Duration::ZERO, "NORMAL").is_err());
        assert!(!path.exists());
        let conn = super::open(&path, true, std::time::Duration::from_secs(1), "OFF").unwrap();
        let mode: String = conn
            .pragma_query_value(None, "journal_mode", |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
        let sync: i64 = conn
            .pragma_query_value(None, "synchronous", |r| r.get(0))
            .unwrap();
        assert_eq!(sync, 0);
    }
}
