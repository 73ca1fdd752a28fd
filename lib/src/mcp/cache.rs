//! The `tools/list` of `mcp serve --mode all`, kept in `.toolctl/` between runs: building it
//! reads and translates every tool file (about 1.5 s at 10,000 tools), reading it back is one
//! file. Derived state, safe to delete. (A start without it does not wait for the whole list:
//! see `State::pending` in serve.rs.)
//!
//! A file per set of filters (`mcp-tools-<hash>.jsonl`): a header line (the format, toolctl's
//! version, the filters, the stamp, the fingerprint, the tools' names and their places among
//! the candidates the pages are cut from), then one tool a line as `tools/list` gives it. It
//! is used only when its stamp is the catalog's stamp now: the stamps (mtime, size) of the
//! index, its journal and `toolctl.json`. Any change the index has
//! taken in, and any edit of `toolctl.json`, moves it; a hand edit the index has not seen yet
//! is found by the server's first change check, a moment later (the list is then made again
//! and announced with `list_changed`).

use super::view::Filters;
use crate::catalog::{CONFIG_FILE, STATE_DIR};
use crate::index::INDEX_FILE;
use serde::{Deserialize, Serialize};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

/// The layout of the file; another one is not read.
const FORMAT: u32 = 2;

/// The stamps (seconds, nanoseconds, size) of the index, its journal and `toolctl.json`
/// (`None`: no such file).
pub type Stamp = Vec<Option<(u64, u32, u64)>>;

/// The catalog's stamp now.
pub fn stamp(root: &Path) -> Stamp {
    stamp_of(
        &root.join(STATE_DIR).join(INDEX_FILE),
        &root.join(CONFIG_FILE),
    )
}

/// The stamp of the index at `index` (with its write-ahead log) and of the configuration file
/// `config`: it moves whenever either is written.
pub fn stamp_of(index: &Path, config: &Path) -> Stamp {
    let mut wal = index.to_path_buf().into_os_string();
    wal.push("-wal");
    [
        index.to_path_buf(),
        PathBuf::from(wal),
        config.to_path_buf(),
    ]
    .iter()
    .map(|path| {
        let meta = std::fs::metadata(path).ok()?;
        let since = meta.modified().ok()?.duration_since(UNIX_EPOCH).ok()?;
        Some((since.as_secs(), since.subsec_nanos(), meta.len()))
    })
    .collect()
}

/// A list read back, or about to be kept.
#[derive(Debug, Clone, Default)]
pub struct Listed {
    /// Each tool's name, in list order.
    pub names: Vec<String>,
    /// Each tool as compact JSON, in list order.
    pub tools: Vec<String>,
    /// Each tool's place among the candidates (the tools the index says the list is made of,
    /// in the same order; one MCP cannot take has no tool): a page is a range of candidates,
    /// so that a page is the same whether it was cut from the whole list or made alone.
    pub slots: Vec<usize>,
    /// How many candidates.
    pub candidates: usize,
    /// Hash of what a client is shown.
    pub fingerprint: u64,
}

#[derive(Serialize, Deserialize)]
struct Header {
    format: u32,
    version: String,
    filters: (Vec<String>, Vec<String>, Vec<String>),
    stamp: Stamp,
    fingerprint: u64,
    names: Vec<String>,
    slots: Vec<usize>,
    candidates: usize,
}

fn filters_of(filters: &Filters) -> (Vec<String>, Vec<String>, Vec<String>) {
    (
        filters.bundles.clone(),
        filters.tags.clone(),
        filters.tools.clone(),
    )
}

/// The file kept for these filters.
pub fn file(root: &Path, filters: &Filters) -> PathBuf {
    let mut hasher = DefaultHasher::new();
    (env!("CARGO_PKG_VERSION"), filters_of(filters)).hash(&mut hasher);
    root.join(STATE_DIR)
        .join(format!("mcp-tools-{:016x}.jsonl", hasher.finish()))
}

/// The largest list read back (256 MiB, about 200,000 tools); a larger one is made again.
const MAX_LIST_BYTES: u64 = 256 * 1024 * 1024;

/// The list kept for `filters` when it was made at `stamp` by this toolctl.
pub fn load(root: &Path, filters: &Filters, stamp: &Stamp) -> Option<Listed> {
    // No index, no list of it.
    stamp.first()?.as_ref()?;
    // Regular, inside the catalog and bounded, as every file read: a FIFO or `/dev/zero` put
    // in its place is no list (made again), never a hang.
    let text =
        crate::base::capped::read_text_at_most(&file(root, filters), Some(root), MAX_LIST_BYTES)
            .ok()?;
    let mut lines = text.lines();
    let header: Header = serde_json::from_str(lines.next()?).ok()?;
    let fits = header.format == FORMAT
        && header.version == env!("CARGO_PKG_VERSION")
        && header.filters == filters_of(filters)
        && header.stamp == *stamp;
    if !fits {
        return None;
    }
    let tools: Vec<String> = lines.map(str::to_owned).collect();
    let whole = tools.len() == header.names.len()
        && header.slots.len() == header.names.len()
        && header.slots.is_sorted_by(|a, b| a < b)
        && header
            .slots
            .last()
            .is_none_or(|last| *last < header.candidates);
    whole.then_some(Listed {
        names: header.names,
        tools,
        slots: header.slots,
        candidates: header.candidates,
        fingerprint: header.fingerprint,
    })
}

/// Keep `listed`, made at `stamp`, for `filters` (best effort: a catalog that cannot be
/// written has none).
pub fn store(root: &Path, filters: &Filters, stamp: &Stamp, listed: &Listed) {
    if stamp.first().is_none_or(Option::is_none) || !root.join(STATE_DIR).is_dir() {
        return;
    }
    let header = Header {
        format: FORMAT,
        version: env!("CARGO_PKG_VERSION").to_owned(),
        filters: filters_of(filters),
        stamp: stamp.clone(),
        fingerprint: listed.fingerprint,
        names: listed.names.clone(),
        slots: listed.slots.clone(),
        candidates: listed.candidates,
    };
    let Ok(mut text) = serde_json::to_string(&header) else {
        return;
    };
    for tool in &listed.tools {
        text.push('\n');
        text.push_str(tool);
    }
    text.push('\n');
    let _ = crate::catalog::store::write_atomic(&file(root, filters), text.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed() -> Listed {
        Listed {
            names: vec!["a".into(), "b".into()],
            tools: vec![r#"{"name":"a"}"#.into(), r#"{"name":"b"}"#.into()],
            slots: vec![0, 2],
            candidates: 3,
            fingerprint: 7,
        }
    }

    #[test]
    fn a_kept_list_is_read_back_only_at_its_stamp_and_filters() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join(STATE_DIR)).unwrap();
        crate::catalog::store::write_atomic(&root.join(STATE_DIR).join(INDEX_FILE), b"x").unwrap();
        let filters = Filters::default();
        let now = stamp(root);
        store(root, &filters, &now, &listed());
        let back = load(root, &filters, &now).unwrap();
        assert_eq!((back.names, back.tools), (listed().names, listed().tools));
        assert_eq!((back.slots, back.candidates), (vec![0, 2], 3));
        assert_eq!(back.fingerprint, 7);
        // Other filters: another file.
        let tagged = Filters {
            tags: vec!["t".into()],
            ..Filters::default()
        };
        assert!(load(root, &tagged, &now).is_none());
        // The index moved: not used.
        crate::catalog::store::write_atomic(&root.join(STATE_DIR).join(INDEX_FILE), b"xy").unwrap();
        assert!(load(root, &filters, &stamp(root)).is_none());
        // A file cut short: not used.
        let later = stamp(root);
        store(root, &filters, &later, &listed());
        let path = file(root, &filters);
        let text = std::fs::read_to_string(&path).unwrap();
        crate::catalog::store::write_atomic(
            &path,
            text.trim_end().rsplit_once('\n').unwrap().0.as_bytes(),
        )
        .unwrap();
        assert!(load(root, &filters, &later).is_none());
    }

    #[test]
    fn without_an_index_nothing_is_kept_or_read() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join(STATE_DIR)).unwrap();
        let filters = Filters::default();
        let now = stamp(root);
        store(root, &filters, &now, &listed());
        assert!(!file(root, &filters).exists());
        assert!(load(root, &filters, &now).is_none());
    }
}
