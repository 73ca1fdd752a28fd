//! Durable file operations: every catalog file is written here, atomically.
//!
//! A write goes to a temporary file in the target's folder, is flushed to disk, renamed over
//! the target and the folder is flushed, so after a crash or `kill -9` at any moment each file
//! is whole: old or new, never half. Folders created on the way are flushed into their parents
//! so a new file is never lost with its folder. Temporary files start with `.` and are never
//! read as catalog files; a writer killed mid-write can leave one behind, nothing worse.
//!
//! Every write, removal and rename here stays inside its catalog: a catalog opened in this
//! process ([`confine`]) is never written through a symlink on the way that leads out of it
//! (git stores symlinks, so a cloned catalog can hold `bundles`, a bundle's `tools` or
//! `.toolctl` as a link to anywhere). Such a write is refused before anything is written, as
//! reads refuse such a file ([`crate::base::capped`]).

use super::error::{Error, Result, Violation};
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The catalogs this process opened ([`confine`]), as their paths were given.
static CATALOGS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Keep every write of this process under `root` inside that catalog: from now on each write
/// here whose path lies under `root` first checks the way to it ([`refuse_link_out`]).
/// Called wherever a catalog is opened or made, so no command can forget it.
pub fn confine(root: &Path) {
    let mut roots = CATALOGS.lock().unwrap_or_else(|e| e.into_inner());
    if !roots.iter().any(|known| known == root) {
        roots.push(root.to_owned());
    }
}

/// A symlink in a catalog that leads out of it, or nowhere ([`link_out`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkOut {
    /// The symlink, relative to the catalog (`.toolctl/index.sqlite`).
    pub link: PathBuf,
    /// Where it leads: resolved, or as the link says when it leads nowhere.
    pub target: PathBuf,
}

impl std::fmt::Display for LinkOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "'{}' in the catalog is a symlink to {}, outside it",
            self.link.display(),
            self.target.display()
        )
    }
}

/// The first symlink between a catalog this process opened and `path` (`path` itself
/// included) that leads out of the catalog or nowhere, if there is one. A symlink that
/// resolves inside the catalog is followed, as reads follow it. One `lstat` per folder on
/// the way; only a symlink is resolved.
pub fn link_out(path: &Path) -> Result<Option<LinkOut>> {
    let roots = CATALOGS.lock().unwrap_or_else(|e| e.into_inner()).clone();
    for root in roots {
        let Ok(inside) = path.strip_prefix(&root) else {
            continue;
        };
        let mut at = root.clone();
        let mut canonical_root = None;
        for part in inside.components() {
            at.push(part);
            let Ok(meta) = std::fs::symlink_metadata(&at) else {
                break; // Nothing there yet: nothing further on the way exists either.
            };
            if !meta.file_type().is_symlink() {
                continue;
            }
            let canonical_root = match &canonical_root {
                Some(known) => known,
                None => canonical_root.insert(
                    std::fs::canonicalize(&root)
                        .map_err(|e| Error::io("cannot resolve", &root, e))?,
                ),
            };
            let target = std::fs::canonicalize(&at);
            if !target
                .as_ref()
                .is_ok_and(|t| t.starts_with(&*canonical_root))
            {
                let target = target
                    .or_else(|_| std::fs::read_link(&at))
                    .unwrap_or_default();
                return Ok(Some(LinkOut {
                    link: at.strip_prefix(&root).unwrap_or(&at).to_owned(),
                    target,
                }));
            }
        }
    }
    Ok(None)
}

/// Refuse (`VALIDATION_ERROR`, as reads do) a write at `path`, under a catalog this process
/// opened, when a symlink between the catalog and `path` (`path` itself included: a folder
/// written into, a file opened in place) leads out of the catalog or nowhere ([`link_out`]).
/// A file replaced by a rename or removed is checked up to its folder only: a symlink in its
/// place is replaced or removed, never followed.
pub fn refuse_link_out(path: &Path) -> Result<()> {
    match link_out(path)? {
        None => Ok(()),
        Some(out) => Err(Error::invalid(
            path.display().to_string(),
            vec![
                Violation::new(
                    "",
                    format!(
                        "{out}; toolctl writes only inside its catalog (make it the folder or file it stands for)"
                    ),
                )
                .rule("write"),
            ],
        )),
    }
}

/// [`refuse_link_out`] for the folder `path` lies in: a write or removal of `path` itself
/// replaces or removes a symlink there, and never follows it.
fn refuse_link_out_above(path: &Path) -> Result<()> {
    match path.parent() {
        Some(parent) => refuse_link_out(parent),
        None => Ok(()),
    }
}

/// How temporary files start. Under the catalog lock, a file with this prefix is a leftover of
/// a writer that was killed, never work in progress.
pub const TEMP_PREFIX: &str = ".toolctl-tmp-";

/// `.toolctl/.gitignore`: everything in the state folder is derived and never committed.
pub const STATE_GITIGNORE: &str =
    "# Derived state of the toolctl catalog: safe to delete, never committed.\n*\n";

/// Create `dir`, a folder at or inside a catalog's `.toolctl/`, and its parents. When
/// `.toolctl/` has no `.gitignore`, it is written before anything else goes in, so no command
/// (a read that builds the index included) ever leaves `git status` dirty.
pub fn create_state_dir(dir: &Path) -> Result<()> {
    let state = dir
        .ancestors()
        .find(|a| a.file_name() == Some(std::ffi::OsStr::new(super::STATE_DIR)));
    if let Some(state) = state {
        let ignore = state.join(".gitignore");
        if !ignore.is_file() {
            write_atomic(&ignore, STATE_GITIGNORE.as_bytes())?;
        }
    }
    ensure_dir(dir)
}

/// Flush a folder's entries (new names, renames, removals) to disk.
pub fn sync_dir(dir: &Path) -> Result<()> {
    crate::base::capped::open_folder(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| Error::io("cannot flush folder", dir, e))
}

/// Create `dir` and any missing parents, flushing each new entry into its parent.
pub fn ensure_dir(dir: &Path) -> Result<()> {
    refuse_link_out(dir)?;
    if dir.is_dir() {
        return Ok(());
    }
    if let Some(parent) = dir.parent() {
        ensure_dir(parent)?;
    }
    match std::fs::create_dir(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && dir.is_dir() => return Ok(()),
        Err(e) => return Err(Error::io("cannot create folder", dir, e)),
    }
    match dir.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => sync_dir(parent),
        _ => Ok(()),
    }
}

/// Create the folder `target` whole, in one step: `fill` writes its content into a hidden
/// staging folder beside it (named `prefix` and a fresh ID), which is then renamed to `target`.
/// A writer killed on the way leaves only the hidden staging folder, which every reader skips;
/// never a `target` without its files. On an error the staging folder is removed.
pub fn create_dir_atomic(
    target: &Path,
    prefix: &str,
    fill: impl FnOnce(&Path) -> Result<()>,
) -> Result<()> {
    let parent = target
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    refuse_link_out(target)?;
    ensure_dir(parent)?;
    let staging = parent.join(format!("{prefix}{}", uuid::Uuid::now_v7()));
    let written = (|| {
        ensure_dir(&staging)?;
        fill(&staging)?;
        // An empty leftover at `target` (a folder a killed writer made) is replaced.
        std::fs::rename(&staging, target)
            .map_err(|e| Error::io("cannot move into place", target, e))?;
        sync_dir(parent)
    })();
    if written.is_err() {
        let _ = std::fs::remove_dir_all(&staging);
    }
    written
}

/// Replace `path` with `bytes` atomically (temp file, fsync, rename, fsync of the folder).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let (temp, dir) = write_temp(path, bytes, 0o666)?;
    temp.persist(path)
        .map_err(|e| Error::io("cannot replace", path, e.error))?;
    sync_dir(&dir)
}

/// [`write_atomic`] for state only its owner may read (a cached token): mode 0600 from the
/// moment the file exists.
pub fn write_private(path: &Path, bytes: &[u8]) -> Result<()> {
    let (temp, dir) = write_temp(path, bytes, 0o600)?;
    temp.persist(path)
        .map_err(|e| Error::io("cannot replace", path, e.error))?;
    sync_dir(&dir)
}

/// Create `path` holding `bytes` atomically, as [`write_atomic`] does, but never replace an
/// existing file: returns `false`, having written nothing, when `path` exists. The check and
/// the rename are one step (no other writer can slip in between).
pub fn create_atomic(path: &Path, bytes: &[u8]) -> Result<bool> {
    let (temp, dir) = write_temp(path, bytes, 0o666)?;
    match temp.persist_noclobber(path) {
        Ok(_) => {}
        // The temporary file is removed when the error drops it.
        Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => return Ok(false),
        Err(e) => return Err(Error::io("cannot create", path, e.error)),
    }
    sync_dir(&dir)?;
    Ok(true)
}

/// A flushed temporary file holding `bytes` in `path`'s folder, and that folder.
fn write_temp(
    path: &Path,
    bytes: &[u8],
    mode: u32,
) -> Result<(tempfile::NamedTempFile, std::path::PathBuf)> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    ensure_dir(dir)?;
    let mut builder = tempfile::Builder::new();
    builder.prefix(TEMP_PREFIX);
    // tempfile makes private (0600) files; catalog files are shared through git like any
    // other source file, so create them as an editor would: 0666 less the umask (`mode`).
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(mode));
    #[cfg(not(unix))]
    let _ = mode;
    let mut temp = builder
        .tempfile_in(dir)
        .map_err(|e| Error::io("cannot create a temporary file in", dir, e))?;
    temp.write_all(bytes)
        .and_then(|()| temp.as_file().sync_all())
        .map_err(|e| Error::io("cannot write", temp.path().to_owned(), e))?;
    Ok((temp, dir.to_owned()))
}

/// The bytes toolctl writes for a JSON document: pretty, two-space indent, final newline.
pub fn to_pretty_json(doc: &Value) -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(doc).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}

/// A JSON document in the form toolctl writes it ([`to_pretty_json`]), serialised once: the
/// size rule ([`oversized`](Self::oversized)) checks the very bytes [`write`](Self::write)
/// writes.
#[derive(Debug, Clone)]
pub struct JsonFile {
    bytes: Vec<u8>,
}

impl JsonFile {
    pub fn new(doc: &Value) -> Self {
        Self {
            bytes: to_pretty_json(doc),
        }
    }

    /// Why the file cannot be written: it is over the limit every reader keeps to
    /// ([`MAX_FILE_BYTES`](crate::base::capped::MAX_FILE_BYTES)), so it would be one no command
    /// reads (a description of megabytes from an MCP server, say).
    pub fn oversized(&self) -> Option<Violation> {
        let limit = crate::base::capped::MAX_FILE_BYTES;
        let len = self.bytes.len() as u64;
        (len > limit).then(|| {
            Violation::new(
                "",
                format!(
                    "the file would be {len} bytes, over the limit of {limit} bytes (4 MiB) toolctl reads"
                ),
            )
            .rule("size")
        })
    }

    /// Write the file at `path` atomically.
    pub fn write(&self, path: &Path) -> Result<()> {
        write_atomic(path, &self.bytes)
    }
}

/// Write a JSON document atomically.
pub fn write_json(path: &Path, doc: &Value) -> Result<()> {
    JsonFile::new(doc).write(path)
}

/// Remove a file and flush its folder; a file already gone is fine.
pub fn remove_file(path: &Path) -> Result<()> {
    refuse_link_out_above(path)?;
    match std::fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io("cannot remove", path, e)),
    }
    match path.parent() {
        Some(parent) => sync_dir(parent),
        None => Ok(()),
    }
}

/// Remove `dir` if it is an empty folder; anything else is left alone.
pub fn remove_dir_if_empty(dir: &Path) -> Result<bool> {
    refuse_link_out_above(dir)?;
    match std::fs::remove_dir(dir) {
        Ok(()) => {
            if let Some(parent) = dir.parent() {
                sync_dir(parent)?;
            }
            Ok(true)
        }
        Err(_) => Ok(false),
    }
}

/// Remove `dir` and everything in it (not following symlinks in it); a folder already gone
/// is fine. The folder is not flushed: callers remove what is already out of sight.
pub fn remove_dir_all(dir: &Path) -> Result<()> {
    refuse_link_out_above(dir)?;
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(Error::io("cannot remove", dir, e))
        }
        _ => Ok(()),
    }
}

/// Rename `from` to `to` (both inside the catalog) and flush their folder.
pub fn rename(from: &Path, to: &Path) -> Result<()> {
    refuse_link_out_above(from)?;
    refuse_link_out_above(to)?;
    std::fs::rename(from, to).map_err(|e| Error::io("cannot move away", from, e))?;
    match to.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => sync_dir(parent),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::capped::MAX_FILE_BYTES;

    #[test]
    fn the_size_rule_checks_the_bytes_written_up_to_the_limit_itself() {
        let doc = |len: u64| serde_json::json!({ "d": "x".repeat(len as usize) });
        let empty = to_pretty_json(&doc(0)).len() as u64;
        let at_limit = JsonFile::new(&doc(MAX_FILE_BYTES - empty));
        assert_eq!(at_limit.bytes.len() as u64, MAX_FILE_BYTES);
        assert!(at_limit.oversized().is_none());
        let over = JsonFile::new(&doc(MAX_FILE_BYTES - empty + 1));
        let violation = over.oversized().expect("one byte over the limit");
        assert_eq!(violation.rule, Some("size"));
        assert!(
            violation
                .message
                .starts_with(&format!("the file would be {} bytes", MAX_FILE_BYTES + 1))
        );

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tool.json");
        at_limit.write(&path).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), at_limit.bytes);
        assert_eq!(at_limit.bytes, to_pretty_json(&doc(MAX_FILE_BYTES - empty)));
    }
}
