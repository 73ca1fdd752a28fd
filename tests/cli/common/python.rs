//! The Python that drives MCP servers in the tests: a venv with the official MCP SDK.
//!
//! `$TOOLCTL_TEST_VENV` names it when set (CI makes it once under its cache folder, see
//! `.ci/run`); else it is `target/test-venv`. A venv that is missing is made here, once for
//! all tests running in parallel (under a file lock), with `python3 -m venv` and `pip install`.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The MCP SDK the tests use (pinned: the tests assert on what this client does).
pub const MCP_SDK: &str = "mcp==2.3.0";

/// The venv's `python`, made first if needed.
pub fn python() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| {
        let venv = std::env::var_os("TOOLCTL_TEST_VENV").map_or_else(
            || Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-venv"),
            PathBuf::from,
        );
        ensure(&venv);
        venv.join("bin/python")
    })
}

/// The marker written once the venv holds the SDK.
fn marker(venv: &Path) -> PathBuf {
    venv.join(format!(".toolctl-{MCP_SDK}"))
}

fn ensure(venv: &Path) {
    if marker(venv).is_file() {
        return;
    }
    let parent = venv.parent().unwrap();
    std::fs::create_dir_all(parent).unwrap();
    let lock = File::create(parent.join(".test-venv.lock")).unwrap();
    lock.lock().unwrap();
    if marker(venv).is_file() {
        return;
    }
    if !venv.join("bin/python").is_file() {
        run(Command::new("python3").args(["-m", "venv"]).arg(venv));
    }
    run(Command::new(venv.join("bin/pip")).args([
        "install",
        "--quiet",
        "--disable-pip-version-check",
        MCP_SDK,
    ]));
    std::fs::write(marker(venv), "").unwrap();
}

fn run(command: &mut Command) {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    assert!(
        output.status.success(),
        "{command:?} failed:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}
