//! Change stamps: what a file or folder's mtime, size and inode say, when a stamp is racy,
//! and how they are read (from an open handle of `bundles/` where it can be).

use super::*;

/// How recent an mtime makes a stamp racy: FAT's 2-second granularity, the coarsest in use.
pub(super) const RACY_WINDOW: Duration = Duration::from_secs(2);

/// Nanoseconds since the epoch from which an mtime makes a stamp racy, for a check now.
pub(super) fn racy_from() -> i128 {
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    now.saturating_sub(RACY_WINDOW).as_nanos() as i128
}

/// Whether a stored stamp must be checked again even when the file's stamp is the same.
pub(super) fn is_racy(stamp: &str) -> bool {
    stamp.ends_with('~')
}

/// Whether what a stamp stands for must be looked at again.
pub(super) fn moved(now: &str, old: &str) -> bool {
    now != old || is_racy(old)
}

/// The SHA-256 of a file's text, as hex.
pub(super) fn content_hash(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// The change stamp of a file or folder; empty when it does not exist; ending in `~` when its
/// mtime is at or after `racy_from` (see the module comment).
pub(super) fn stamp(path: &Path, racy_from: i128) -> String {
    let mut out = String::new();
    write_stamp(
        std::fs::metadata(path).ok().map(|m| facts(&m)),
        racy_from,
        &mut out,
    );
    out
}

/// What a stamp is made of: mtime (nanoseconds since the epoch), size and inode.
pub(super) type Facts = (i128, u64, u64);

pub(super) fn facts(meta: &std::fs::Metadata) -> Facts {
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
pub(super) fn write_stamp(facts: Option<Facts>, racy_from: i128, out: &mut String) {
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
pub(super) fn stamp_is(facts: Option<Facts>, racy_from: i128, old: &str) -> bool {
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
pub(super) struct StampReader<'a> {
    pub(super) root: &'a Path,
    pub(super) racy_from: i128,
    #[cfg(unix)]
    pub(super) bundles: Option<std::fs::File>,
}

impl<'a> StampReader<'a> {
    pub(super) fn new(root: &'a Path, racy_from: i128) -> Self {
        Self {
            root,
            racy_from,
            // Without it (a folder that cannot be opened), paths are looked up in full.
            #[cfg(unix)]
            bundles: crate::base::capped::open_folder(&root.join(BUNDLES_DIR)).ok(),
        }
    }

    pub(super) fn facts(&self, path: &str) -> Option<Facts> {
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
pub(super) fn subdirs(dir: &Path) -> HashSet<String> {
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
