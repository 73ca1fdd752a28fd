//! Where a catalog's derived state lives: `.toolctl/` in the catalog when this process may
//! write there; else (a read-only mount, another user's tree, a `.toolctl` that is a link out
//! of the catalog or not a folder) a folder of the user's cache kept for this catalog,
//! `$XDG_CACHE_HOME/toolctl/<hash of the catalog's path>/` (`~/.cache` without
//! `XDG_CACHE_HOME`). The search index, call counts of rate-limited tools and OAuth2 tokens
//! follow this rule, so a read-only catalog keeps working (usage counts are not kept then).

use super::STATE_DIR;
use std::path::{Path, PathBuf};

/// The folder of the user's cache kept for the catalog at `root`; `None` when neither
/// `XDG_CACHE_HOME` nor `HOME` is set.
pub fn cache_dir(root: &Path) -> Option<PathBuf> {
    use sha2::Digest;
    let var = |name| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let cache = var("XDG_CACHE_HOME").or_else(|| var("HOME").map(|home| home.join(".cache")))?;
    let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.into());
    let digest = sha2::Sha256::digest(root.as_os_str().as_encoded_bytes());
    let hash = hex::encode(&digest[..8]);
    Some(cache.join("toolctl").join(hash))
}

/// Why this process may not write `path` (a file or folder under the catalog's `.toolctl/`),
/// if it may not: `.toolctl/` (SQLite writes its side files beside a database), and `path`
/// when it exists, or the catalog folder when `.toolctl/` is not there yet, must be writable,
/// and not through a symlink out of the catalog. Said as a command says why state is kept
/// elsewhere (`<why>: its search index is kept in …`).
pub fn unwritable(root: &Path, path: &Path) -> Option<String> {
    let state = root.join(STATE_DIR);
    if state.exists() && !state.is_dir() {
        // A file where the state folder goes: read as a read-only catalog.
        return Some(format!(
            "{} is not a folder, so {} keeps no state of its own",
            state.display(),
            root.display()
        ));
    }
    match super::store::link_out(path) {
        // A symlink out of the catalog on the way (a cloned `.toolctl`, a linked file): no
        // write goes there, though the catalog itself may be writable.
        Ok(Some(out)) => {
            return Some(format!(
                "{}: {out}, and toolctl writes only inside its catalog",
                root.display()
            ));
        }
        Ok(None) => {}
        Err(e) => return Some(format!("{}: {e}", root.display())),
    }
    let can_write = if path.exists() {
        writable(path) && writable(&state)
    } else if state.is_dir() {
        writable(&state)
    } else {
        writable(root)
    };
    (!can_write).then(|| format!("{} cannot be written", root.display()))
}

/// The folder where state kept beside the index (call counts, tokens) goes for the catalog
/// at `root`: its `.toolctl/`, else its cache folder; `.toolctl/` when there is no cache folder
/// either (the writes then fail, naming it).
pub fn dir(root: &Path) -> PathBuf {
    let state = root.join(STATE_DIR);
    match unwritable(root, &state) {
        Some(_) => cache_dir(root).unwrap_or(state),
        None => state,
    }
}

/// `access(2)` for writing: the mode bits, a read-only mount and an immutable file all count
/// (root passes the mode bits, not the other two).
#[cfg(unix)]
fn writable(path: &Path) -> bool {
    rustix::fs::access(path, rustix::fs::Access::WRITE_OK).is_ok()
}

#[cfg(not(unix))]
fn writable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| !m.permissions().readonly())
}
