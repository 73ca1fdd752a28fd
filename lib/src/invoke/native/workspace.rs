//! The workspace: the one folder file tools may touch.
//!
//! Paths are opened through `cap-std`, which resolves every path component beneath the
//! workspace's folder handle (with `openat2(RESOLVE_BENEATH)` where the kernel has it) and
//! refuses whatever would leave it: `..` above the root, absolute paths, symlinks that point
//! out (absolute ones such as `/proc/self/root` included). Nothing here joins strings and hopes.

use crate::base::error_code::ErrorCode;
use crate::invoke::{Failure, Remedy};
use cap_std::fs::Dir;
use serde_json::json;
use std::io;
use std::path::{Path, PathBuf};

pub struct Workspace {
    root: PathBuf,
    pub dir: Dir,
}

impl Workspace {
    pub fn open(root: &Path) -> Result<Self, Failure> {
        let dir = Dir::open_ambient_dir(root, cap_std::ambient_authority()).map_err(|e| {
            Failure::new(
                ErrorCode::ValidationError,
                format!("cannot open the workspace {}: {e}", root.display()),
            )
            .with_remedy(Remedy::OtherWorkspace)
        })?;
        Ok(Self {
            root: root.to_owned(),
            dir,
        })
    }

    /// A workspace-relative path as given by a call; "" is the workspace itself.
    pub fn relative(text: &str) -> PathBuf {
        if text.is_empty() {
            PathBuf::from(".")
        } else {
            PathBuf::from(text)
        }
    }

    /// The real location of a folder inside the workspace (checked to be inside), for a
    /// program's working folder.
    pub fn real_dir(&self, relative: &Path, given: &str) -> Result<PathBuf, Failure> {
        let meta = self
            .dir
            .metadata(relative)
            .map_err(|e| self.error(&e, given))?;
        if !meta.is_dir() {
            return Err(Failure::new(
                ErrorCode::ValidationError,
                format!("'{given}' is not a folder"),
            ));
        }
        let inside = self
            .dir
            .canonicalize(relative)
            .map_err(|e| self.error(&e, given))?;
        Ok(self.root.join(inside))
    }

    /// The failure of an operation on `given` (the path as the call gave it).
    pub fn error(&self, e: &io::Error, given: &str) -> Failure {
        let details = json!({ "path": given });
        match e.kind() {
            io::ErrorKind::NotFound => {
                Failure::new(ErrorCode::NotFound, format!("'{given}' does not exist"))
            }
            // cap-std's refusal of a path that leads outside the workspace.
            io::ErrorKind::PermissionDenied if is_escape(e) => Failure::new(
                ErrorCode::Forbidden,
                format!("'{given}' is outside the workspace"),
            )
            .with_hint(format!(
                "file tools only reach files under {}; give a path relative to it",
                self.root.display()
            )),
            io::ErrorKind::PermissionDenied => {
                Failure::new(ErrorCode::Forbidden, format!("'{given}': {e}"))
            }
            // Not a folder, a symlink loop, …: about the path the call gave.
            _ => Failure::new(ErrorCode::ValidationError, format!("'{given}': {e}")),
        }
        .with_details(details)
    }
}

/// Whether an error is cap-std's "a path led outside of the filesystem".
fn is_escape(e: &io::Error) -> bool {
    e.to_string().contains("outside of the filesystem")
}
