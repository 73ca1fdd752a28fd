//! The catalog's advisory write lock: every write to a catalog happens while holding it.
//!
//! One exclusive lock per catalog (`.toolctl/lock`) serialises writers across processes, so a
//! check-then-write such as "no tool has this <slug, version> yet, so create it" is atomic and
//! `<slug, version>` uniqueness holds globally. Writes are short (milliseconds), so a single
//! lock costs nothing in practice and cannot deadlock. Readers take no lock: every file is
//! replaced by an atomic rename, so a reader sees the old file or the new one, never half.
//!
//! This is the only module that calls std's file-lock methods (clippy's `disallowed-methods`
//! enforces it). The lock is released when the [`LockGuard`] is dropped, or by the OS when the
//! process dies, so a crashed writer never leaves the catalog locked.

#![allow(clippy::disallowed_methods)]

use super::error::{Error, Result};
use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Proof that the catalog write lock is held.
#[derive(Debug)]
pub struct LockGuard {
    file: File,
}

impl Drop for LockGuard {
    fn drop(&mut self) {
        // Closing the file releases the lock too; unlocking first makes it prompt.
        let _ = self.file.unlock();
    }
}

/// Take the exclusive lock on `path` (created if missing), waiting at most `timeout`.
pub fn acquire(path: &Path, timeout: Duration) -> Result<LockGuard> {
    if let Some(parent) = path.parent() {
        super::store::create_state_dir(parent)?;
    }
    super::store::refuse_link_out(path)?;
    // A folder, FIFO or link where the lock file goes is no lock: named, with its fix.
    if let Ok(meta) = std::fs::symlink_metadata(path)
        && !meta.is_file()
    {
        let kind = if meta.is_dir() {
            "a folder"
        } else if meta.file_type().is_symlink() {
            "a symlink"
        } else {
            "not a regular file"
        };
        return Err(Error::invalid(
            path.display().to_string(),
            vec![
                super::error::Violation::new(
                    "",
                    format!(
                        "{kind} is where toolctl keeps this lock file; remove it (toolctl makes the file again)"
                    ),
                )
                .rule("read"),
            ],
        ));
    }
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(path)
        .map_err(|e| Error::io("cannot open lock file", path, e))?;
    let started = Instant::now();
    let mut pause = Duration::from_millis(1);
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(LockGuard { file }),
            Err(TryLockError::WouldBlock) => {}
            Err(TryLockError::Error(e)) => return Err(Error::io("cannot lock", path, e)),
        }
        let waited = started.elapsed();
        if waited >= timeout {
            return Err(Error::LockTimeout {
                path: PathBuf::from(path),
                timeout,
                waited,
            });
        }
        std::thread::sleep(pause.min(timeout - waited));
        pause = (pause * 2).min(Duration::from_millis(25));
    }
}
