//! `readfile` and `file-search`: reading and finding files in the workspace.

use super::Args;
use super::workspace::Workspace;
use crate::base::error_code::ErrorCode;
use crate::invoke::Failure;
use serde_json::{Value, json};
use std::io::Read;
use std::path::{Path, PathBuf};

/// Default and largest `max_bytes` of `readfile`.
const READ_DEFAULT: u64 = 64 * 1024;
const READ_MAX: u64 = 1024 * 1024;

/// Default and largest `max_results` of `file-search`.
const SEARCH_DEFAULT: u64 = 50;
const SEARCH_MAX: u64 = 200;

/// How many entries `file-search` looks at before it stops (and says the result may be
/// incomplete): a search of a huge tree ends in bounded time.
const SEARCH_VISIT_LIMIT: usize = 100_000;

/// `readfile`: the UTF-8 text of a file, at most `max_bytes` of it.
pub fn readfile(args: &Args, root: &Path) -> Result<Value, Failure> {
    let given = args.required_string("path")?;
    let max = args.integer("max_bytes", READ_DEFAULT, 1, READ_MAX)?;
    let workspace = Workspace::open(root)?;
    let path = Workspace::relative(given);
    let fail = |e: std::io::Error| workspace.error(&e, given);
    // Only regular files: a FIFO or device would block or never end.
    let meta = workspace.dir.metadata(&path).map_err(fail)?;
    if !meta.is_file() {
        return Err(Failure::new(
            ErrorCode::ValidationError,
            format!("'{given}' is not a regular file"),
        ));
    }
    let file = workspace.dir.open(&path).map_err(fail)?;
    let mut bytes = Vec::new();
    file.take(max + 1).read_to_end(&mut bytes).map_err(fail)?;
    let truncated = bytes.len() as u64 > max;
    bytes.truncate(max as usize);
    if bytes.contains(&0) {
        return Err(binary(given));
    }
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        // Cut inside a character by max_bytes: keep the whole characters before it.
        Err(e) if truncated && e.utf8_error().error_len().is_none() => {
            let valid = e.utf8_error().valid_up_to();
            let mut bytes = e.into_bytes();
            bytes.truncate(valid);
            String::from_utf8(bytes).map_err(|_| binary(given))?
        }
        Err(_) => return Err(binary(given)),
    };
    Ok(json!({
        "path": given,
        "content_text": text,
        "bytes": meta.len(),
        "truncated": truncated,
    }))
}

fn binary(given: &str) -> Failure {
    Failure::new(
        ErrorCode::ValidationError,
        format!("'{given}' is not UTF-8 text (a binary file?)"),
    )
    .with_hint("readfile reads text files only")
}

/// What `file-search` looks for.
enum Matcher {
    /// A glob (`*.md`, `src/**/*.rs`): matched against the path, and against the name alone
    /// when it has no `/`.
    Glob {
        glob: globset::GlobMatcher,
        by_name: bool,
    },
    /// A substring of the path (so of the name too), case-insensitive.
    Text(String),
}

impl Matcher {
    fn new(query: &str) -> Result<Self, Failure> {
        if !query.contains(['*', '?', '[', '{']) {
            return Ok(Self::Text(query.to_lowercase()));
        }
        // `*` stays inside one folder (`src/*.rs` is not `src/**/*.rs`).
        let glob = globset::GlobBuilder::new(query)
            .literal_separator(true)
            .build()
            .map_err(|e| {
                Failure::new(
                    ErrorCode::ValidationError,
                    format!("'{query}' is not a valid glob: {e}"),
                )
                .with_details(json!({ "pointer": "/query" }))
            })?;
        Ok(Self::Glob {
            glob: glob.compile_matcher(),
            by_name: !query.contains('/'),
        })
    }

    fn matches(&self, path: &str, name: &str) -> bool {
        match self {
            Self::Glob { glob, by_name } => {
                glob.is_match(path) || (*by_name && glob.is_match(name))
            }
            Self::Text(text) => path.to_lowercase().contains(text),
        }
    }
}

/// `file-search`: files and folders whose path contains the query, or matches it as a glob,
/// under `path` (default: the whole workspace), in a stable order (a folder's entries by name,
/// then its subfolders' in name order). Symlinks are never followed
/// into folders; a symlink to a file inside the workspace is listed as a file.
pub fn file_search(args: &Args, root: &Path) -> Result<Value, Failure> {
    let query = args.required_string("query")?;
    if query.is_empty() {
        return Err(Failure::new(
            ErrorCode::ValidationError,
            "argument 'query' is empty",
        ));
    }
    let base_given = args.string("path")?.unwrap_or("");
    let max = args.integer("max_results", SEARCH_DEFAULT, 1, SEARCH_MAX)? as usize;
    let include_hidden = args.boolean("include_hidden")?;
    let matcher = Matcher::new(query)?;
    let workspace = Workspace::open(root)?;
    let base = Workspace::relative(base_given);
    // The start must be a folder the call may read.
    workspace
        .dir
        .open_dir(&base)
        .map_err(|e| workspace.error(&e, base_given))?;

    let mut results = Vec::new();
    let mut truncated = false;
    let mut visited = 0;
    // Depth first, names sorted: the same tree always gives the same answer. The stack holds
    // paths, not open folders: one folder is open at a time (read whole, then closed), so a
    // deep or wide tree never runs out of file handles. A folder that cannot be read fails
    // the call, naming it: an answer that silently misses files would look complete.
    let mut stack: Vec<PathBuf> = vec![base];
    'walk: while let Some(folder) = stack.pop() {
        let mut entries = read_folder(&workspace, &folder)?;
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        let mut subfolders = Vec::new();
        for (name, kind) in entries {
            visited += 1;
            if visited > SEARCH_VISIT_LIMIT {
                truncated = true;
                break 'walk;
            }
            let name = name.to_string_lossy().into_owned();
            if !include_hidden && name.starts_with('.') {
                continue;
            }
            let path = folder.join(&name);
            let shown = display(&path);
            let listed = if kind.is_dir() {
                subfolders.push(path.clone());
                Some("dir")
            } else if kind.is_file() {
                Some("file")
            } else if kind.is_symlink() {
                // Listed only when it leads to a file inside the workspace.
                workspace
                    .dir
                    .metadata(&path)
                    .ok()
                    .filter(|m| m.is_file())
                    .map(|_| "file")
            } else {
                None
            };
            if let Some(kind) = listed
                && matcher.matches(&shown, &name)
            {
                if results.len() == max {
                    truncated = true;
                    break 'walk;
                }
                results.push(json!({ "path": shown, "type": kind }));
            }
        }
        // Popped in name order.
        stack.extend(subfolders.into_iter().rev());
    }
    Ok(json!({ "results": results, "truncated": truncated }))
}

/// The names and kinds of a folder's entries, read whole with the folder closed after.
/// An entry that vanished meanwhile is left out; any other error fails the search.
fn read_folder(
    workspace: &Workspace,
    folder: &Path,
) -> Result<Vec<(std::ffi::OsString, cap_std::fs::FileType)>, Failure> {
    let unreadable = |e: std::io::Error| {
        let shown = display(folder);
        let shown = if shown.is_empty() {
            ".".to_owned()
        } else {
            shown
        };
        let code = if e.kind() == std::io::ErrorKind::PermissionDenied {
            ErrorCode::Forbidden
        } else {
            ErrorCode::Internal
        };
        Failure::new(
            code,
            format!("cannot read the folder '{shown}': {e}; the search stopped there"),
        )
        .with_details(json!({ "path": shown }))
    };
    let dir = workspace.dir.open_dir(folder).map_err(unreadable)?;
    let mut out = Vec::new();
    for entry in dir.entries().map_err(unreadable)? {
        let entry = entry.map_err(unreadable)?;
        match entry.file_type() {
            Ok(kind) => out.push((entry.file_name(), kind)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(unreadable(e)),
        }
    }
    Ok(out)
}

/// A workspace-relative path as shown: `/`-separated, without a leading `./`.
fn display(path: &Path) -> String {
    let parts: Vec<String> = path
        .components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    parts.join("/")
}
