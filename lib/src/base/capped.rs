//! The one way toolctl reads a file it did not write itself: catalog files, input files
//! (`tool put FILE`, `--args-file`, `--batch`, `bundle put --file`, `validate FILE`), the
//! secrets file and the OAuth2 token cache.
//!
//! A file is read only if it is a regular file (a FIFO would hang the reader, `/dev/zero`
//! would grow memory without end) and at most [`MAX_FILE_BYTES`] long; a catalog file that is
//! a symlink, or lies in a symlinked folder, must resolve inside its catalog (git stores
//! symlinks, so a cloned catalog can hold one to anywhere). The file is opened without blocking and checked on the open handle, so
//! what is read is what was checked.

use std::io::Read;
use std::path::{Path, PathBuf};

/// The largest file read (4 MiB): a catalog file or an input file. An archive takes files of
/// this size too, so every bundle the catalog reads stays exportable.
pub const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// Why a file was not read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("no such file")]
    Missing,
    #[error("not a regular file (a {0}); only regular files are read")]
    NotRegular(&'static str),
    #[error("a symlink (or a file in a symlinked folder) to {}, outside the catalog; catalog files must stay inside it", .0.display())]
    Escapes(PathBuf),
    #[error("{len} bytes, over the limit of {limit} bytes ({} MiB)", .limit / (1024 * 1024))]
    TooLarge { len: u64, limit: u64 },
    #[error("not UTF-8 text (invalid byte at offset {0})")]
    NotUtf8(usize),
    #[error("cannot read: {0}")]
    Io(std::io::Error),
}

/// The bytes of the file at `path`. With `catalog`, the file belongs to that catalog: a
/// symlink must resolve inside it.
pub fn read_bytes(path: &Path, catalog: Option<&Path>) -> Result<Vec<u8>, ReadError> {
    read_bytes_at_most(path, catalog, MAX_FILE_BYTES)
}

/// [`read_bytes`] with a limit of its own: for state toolctl keeps in `.toolctl/` that can
/// outgrow a catalog file (a cached list of every tool).
pub fn read_bytes_at_most(
    path: &Path,
    catalog: Option<&Path>,
    limit: u64,
) -> Result<Vec<u8>, ReadError> {
    let file = match catalog {
        // A path without a symlink anywhere is inside its catalog: one open tells.
        Some(root) => match open_without_symlinks(path) {
            Some(file) => file?,
            None => {
                check_inside(path, root)?;
                open(path)?
            }
        },
        None => open(path)?,
    };
    let len = regular_len(&file)?;
    read_open_at_most(file, len, limit)
}

/// `path` opened as [`open`] opens it, if no part of it is a symlink (Linux's `openat2` with
/// `RESOLVE_NO_SYMLINKS`); `None` where one is, or where the kernel cannot tell (older than
/// 5.6, or a sandbox that refuses the call): the caller then looks at each folder.
fn open_without_symlinks(path: &Path) -> Option<Result<std::fs::File, ReadError>> {
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::{Mode, OFlags, ResolveFlags};
        match rustix::fs::openat2(
            rustix::fs::CWD,
            path,
            OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY,
            Mode::empty(),
            ResolveFlags::NO_SYMLINKS,
        ) {
            Ok(fd) => Some(Ok(std::fs::File::from(fd))),
            Err(rustix::io::Errno::NOENT) => Some(Err(ReadError::Missing)),
            Err(_) => None,
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = path;
        None
    }
}

/// The bytes of a file opened by [`open_regular`] (`len` long then), at most
/// [`MAX_FILE_BYTES`]: for readers that look at the open file first (its mode).
pub fn read_open(file: std::fs::File, len: u64) -> Result<Vec<u8>, ReadError> {
    read_open_at_most(file, len, MAX_FILE_BYTES)
}

fn read_open_at_most(file: std::fs::File, len: u64, limit: u64) -> Result<Vec<u8>, ReadError> {
    if len > limit {
        return Err(ReadError::TooLarge { len, limit });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    // The file may grow after the check: never read past the limit.
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge {
            len: bytes.len() as u64,
            limit,
        });
    }
    Ok(bytes)
}

/// Open `path` if it is a regular file (checked on the open handle); returns it with its
/// length. For readers with a limit of their own (archives).
pub fn open_regular(path: &Path) -> Result<(std::fs::File, u64), ReadError> {
    let file = open(path)?;
    let len = regular_len(&file)?;
    Ok((file, len))
}

/// The length of an open file, if it is a regular file.
fn regular_len(file: &std::fs::File) -> Result<u64, ReadError> {
    let meta = file.metadata().map_err(ReadError::Io)?;
    let kind = meta.file_type();
    if !kind.is_file() {
        return Err(ReadError::NotRegular(kind_name(&kind)));
    }
    Ok(meta.len())
}

/// Standard input's text, at most [`MAX_FILE_BYTES`].
pub fn read_stdin() -> Result<String, ReadError> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(ReadError::TooLarge {
            len: bytes.len() as u64,
            limit: MAX_FILE_BYTES,
        });
    }
    String::from_utf8(bytes).map_err(|e| ReadError::NotUtf8(e.utf8_error().valid_up_to()))
}

/// The text of the file at `path`, as [`read_bytes`] reads it; it must be UTF-8.
pub fn read_text(path: &Path, catalog: Option<&Path>) -> Result<String, ReadError> {
    read_text_at_most(path, catalog, MAX_FILE_BYTES)
}

/// [`read_text`] with a limit of its own, as [`read_bytes_at_most`].
pub fn read_text_at_most(
    path: &Path,
    catalog: Option<&Path>,
    limit: u64,
) -> Result<String, ReadError> {
    String::from_utf8(read_bytes_at_most(path, catalog, limit)?)
        .map_err(|e| ReadError::NotUtf8(e.utf8_error().valid_up_to()))
}

/// A catalog file that is a symlink, or lies in a symlinked folder (a bundle or slug folder:
/// git stores those too), must resolve inside the catalog. The folders between the catalog and
/// the file are looked at (one `lstat` each); only a path through a symlink is resolved.
fn check_inside(path: &Path, root: &Path) -> Result<(), ReadError> {
    let is_link =
        |at: &Path| std::fs::symlink_metadata(at).is_ok_and(|meta| meta.file_type().is_symlink());
    let linked = match path.strip_prefix(root) {
        Ok(inside) => {
            let mut at = root.to_path_buf();
            inside.components().any(|part| {
                at.push(part);
                is_link(&at)
            })
        }
        Err(_) => is_link(path),
    };
    if !linked {
        // No symlink on the way (or missing: the open says so).
        return Ok(());
    }
    let target = std::fs::canonicalize(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => ReadError::Missing,
        _ => ReadError::Io(e),
    })?;
    let root = std::fs::canonicalize(root).map_err(ReadError::Io)?;
    if target.starts_with(&root) {
        Ok(())
    } else {
        Err(ReadError::Escapes(target))
    }
}

/// The text of a kernel file (`/proc`, the cgroup file system): none is a user's, and they
/// report no size, so they are read whole, as the kernel writes them.
#[allow(
    clippy::disallowed_methods,
    reason = "the one reader of kernel files; user files go through read_text"
)]
pub fn read_kernel_file(path: impl AsRef<Path>) -> std::io::Result<String> {
    std::fs::read_to_string(path)
}

/// [`read_kernel_file`] for a file that need not be UTF-8 (`/proc/<pid>/environ`).
#[allow(
    clippy::disallowed_methods,
    reason = "the one reader of kernel files; user files go through read_bytes"
)]
pub fn read_kernel_bytes(path: impl AsRef<Path>) -> std::io::Result<Vec<u8>> {
    std::fs::read(path)
}

/// A folder opened for its handle (to flush its entries, or to look names up from it), never
/// to read a file.
#[allow(
    clippy::disallowed_methods,
    reason = "a folder handle reads no file's content"
)]
pub fn open_folder(path: &Path) -> std::io::Result<std::fs::File> {
    let file = std::fs::File::open(path)?;
    if file.metadata()?.is_dir() {
        Ok(file)
    } else {
        Err(std::io::Error::new(
            std::io::ErrorKind::NotADirectory,
            "not a folder",
        ))
    }
}

/// Open for reading without blocking: opening a FIFO with no writer must not hang.
fn open(path: &Path) -> Result<std::fs::File, ReadError> {
    let missing = |e: std::io::Error| match e.kind() {
        std::io::ErrorKind::NotFound => ReadError::Missing,
        _ => ReadError::Io(e),
    };
    #[cfg(unix)]
    {
        use rustix::fs::{Mode, OFlags};
        let fd = rustix::fs::open(
            path,
            OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY,
            Mode::empty(),
        )
        .map_err(|e| missing(e.into()))?;
        Ok(std::fs::File::from(fd))
    }
    #[cfg(not(unix))]
    {
        std::fs::File::open(path).map_err(missing)
    }
}

fn kind_name(kind: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "FIFO";
        }
        if kind.is_char_device() || kind.is_block_device() {
            return "device";
        }
        if kind.is_socket() {
            return "socket";
        }
    }
    if kind.is_dir() {
        "folder"
    } else {
        "special file"
    }
}
