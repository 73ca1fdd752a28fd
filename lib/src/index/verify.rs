//! Whether the bytes of `index.sqlite` are the ones SQLite wrote for toolctl.
//!
//! SQLite keeps no checksums: a byte flipped inside a page (a bad copy, a disk error, a hand
//! edit) can read as another valid value, or as an index entry that no longer points at its
//! row, and a read then answers wrongly without an error (`tool list` missing tools). Only
//! `PRAGMA integrity_check`, which reads every page and looks every row up in every index,
//! sees all of it, and it costs more than reading the whole file: 0.8–1.2 s for a 10,000-tool
//! index (18 MB; measured with Python's sqlite3 on a machine at load 16, so an upper bound),
//! against about 60 µs for the stamp's `stat` and read: too much for every command.
//!
//! So the check runs only when the file changed behind toolctl's back. Whenever toolctl has
//! the file in a state it trusts (it built it, checked it, or found it as it left it) and has
//! written to it, it records the file's stamp (size, mtime, ctime, inode) in
//! `index.sqlite.stamp` beside it: after each sync or refresh, and when the connection closes
//! (SQLite copies the write-ahead log into the file then). An index whose stamp differs from
//! the recorded one (or that has none: a crash before the stamp was written, an older
//! toolctl) is checked whole before it is used, and rebuilt when the check fails. A reader
//! that finds the stamp as recorded pays one `stat` and one small read.
//!
//! **What the stamp cannot see (the stamp window).** A command trusts the file from its check
//! (or from finding the stamp as recorded) until it records the stamp again, after its sync and
//! when its connection closes; other toolctl processes may write the file in between (WAL),
//! so a stamp that moved during that time is not a sign of damage and is recorded as it is.
//! Bytes changed by something else inside that window (while a toolctl command has the index
//! open: milliseconds for most commands, up to 30 minutes for `index watch`) are therefore
//! stamped as trusted and not checked by the next command. Such damage is still found when a
//! query reads a page SQLite cannot decode (the command rebuilds and runs the query again,
//! [`super::Index::read`]); damage that reads as valid values can give wrong answers until
//! the file changes again behind toolctl's back or `index rebuild` runs. Closing the window
//! would need a checksum of the file's content toolctl writes itself (SQLite has none; the
//! `cksumvfs` extension is not in rusqlite's bundled build) or an `integrity_check` before
//! each stamp (0.8–1.2 s at 10,000 tools): both cost more than the window is worth.

use std::path::{Path, PathBuf};

/// The stamp file beside the index.
pub(super) fn stamp_file(index: &Path) -> PathBuf {
    let mut name = index.as_os_str().to_owned();
    name.push(".stamp");
    PathBuf::from(name)
}

/// The index file's stamp now; `None` when it cannot be read.
pub(super) fn stamp_of(index: &Path) -> Option<String> {
    let meta = std::fs::metadata(index).ok()?;
    Some(format!(
        "{} {} {} {}",
        meta.len(),
        nanos(meta.modified().ok()?),
        ctime(&meta),
        inode(&meta)
    ))
}

fn nanos(time: std::time::SystemTime) -> i128 {
    match time.duration_since(std::time::UNIX_EPOCH) {
        Ok(after) => after.as_nanos() as i128,
        Err(before) => -(before.duration().as_nanos() as i128),
    }
}

#[cfg(unix)]
fn ctime(meta: &std::fs::Metadata) -> i128 {
    use std::os::unix::fs::MetadataExt;
    i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec())
}

#[cfg(not(unix))]
fn ctime(_: &std::fs::Metadata) -> i128 {
    0
}

#[cfg(unix)]
fn inode(meta: &std::fs::Metadata) -> u64 {
    use std::os::unix::fs::MetadataExt;
    meta.ino()
}

#[cfg(not(unix))]
fn inode(_: &std::fs::Metadata) -> u64 {
    0
}

/// Whether the index is as toolctl last left it (its stamp is the recorded one).
pub(super) fn is_as_left(index: &Path) -> bool {
    match (
        stamp_of(index),
        crate::base::capped::read_text(&stamp_file(index), None),
    ) {
        (Some(now), Ok(recorded)) => now == recorded,
        _ => false,
    }
}

/// Record the index's stamp now, unless it is recorded already. A failure is ignored: the
/// next command then checks the index once more.
pub(super) fn record(index: &Path) {
    let Some(now) = stamp_of(index) else { return };
    let file = stamp_file(index);
    if crate::base::capped::read_text(&file, None).is_ok_and(|recorded| recorded == now) {
        return;
    }
    let _ = crate::catalog::store::write_atomic(&file, now.as_bytes());
}

/// `PRAGMA integrity_check` on its own read-only connection (SQLite 3.44 and later check the
/// FTS5 tables with it too): `true` only when it finds nothing wrong.
pub(super) fn integrity_check_passes(index: &Path) -> bool {
    use rusqlite::{Connection, OpenFlags};
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let Ok(conn) = Connection::open_with_flags(index, flags) else {
        return false;
    };
    let _ = conn.busy_timeout(super::BUSY_TIMEOUT);
    conn.query_row("PRAGMA integrity_check(1)", [], |row| {
        row.get::<_, String>(0)
    })
    .is_ok_and(|answer| answer == "ok")
}

/// Records the index's stamp when the connection it follows in [`super::Index`] has closed
/// (fields drop in order), if toolctl trusted the file.
#[derive(Debug)]
pub(super) struct StampOnClose(pub(super) Option<PathBuf>);

impl Drop for StampOnClose {
    fn drop(&mut self) {
        if let Some(index) = &self.0 {
            record(index);
        }
    }
}
