//! The official MCP clients the tests drive `toolctl mcp serve` with: the Python SDK (in a
//! venv) and the inspector's CLI (an npm package); and the reference server whose tools the
//! tests import (`@modelcontextprotocol/server-everything`, an npm package).
//!
//! Each lives in a folder that `.ci/run` makes once under its cache folder and names with
//! `$TOOLCTL_TEST_VENV` / `$TOOLCTL_TEST_INSPECTOR` / `$TOOLCTL_TEST_EVERYTHING`; without
//! those, under `target/`. A folder
//! that is missing is made here, once for all tests running in parallel (under a file lock):
//! `python3 -m venv` + `pip install`, `npm install --prefix`.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The MCP SDK the tests use (pinned: the tests assert on what this client does).
pub const MCP_SDK: &str = "mcp==2.3.0";

/// The inspector (pinned for the same reason); `mcp-inspector --cli` is its CLI.
pub const INSPECTOR: &str = "@modelcontextprotocol/inspector@2.12.0";

/// The venv's `python`, made first if needed.
pub fn python() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| {
        let venv = folder("TOOLCTL_TEST_VENV", "test-venv");
        ensure(&venv, MCP_SDK, |venv| {
            if !venv.join("bin/python").is_file() {
                run(Command::new("python3").args(["-m", "venv"]).arg(venv));
            }
            run(Command::new(venv.join("bin/pip")).args([
                "install",
                "--quiet",
                "--disable-pip-version-check",
                MCP_SDK,
            ]));
        });
        venv.join("bin/python")
    })
}

/// The HTTP clients the `serve` tests drive it with (pinned: the tests assert on what they
/// read): httpx, httpx-sse for event streams, and openapi-spec-validator for its OpenAPI
/// document.
pub const HTTP_CLIENTS: [&str; 3] = [
    "httpx==0.28.1",
    "httpx-sse==0.4.3",
    "openapi-spec-validator==0.9.0",
];

/// The `python` of the HTTP clients' venv (`$TOOLCTL_TEST_HTTP_VENV`), made first if needed.
pub fn http_python() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| {
        let venv = folder("TOOLCTL_TEST_HTTP_VENV", "test-http-venv");
        ensure(&venv, &HTTP_CLIENTS.join("+"), |venv| {
            if !venv.join("bin/python").is_file() {
                run(Command::new("python3").args(["-m", "venv"]).arg(venv));
            }
            run(Command::new(venv.join("bin/pip"))
                .args(["install", "--quiet", "--disable-pip-version-check"])
                .args(HTTP_CLIENTS));
        });
        venv.join("bin/python")
    })
}

/// The inspector's `mcp-inspector` program, installed first if needed.
pub fn inspector() -> &'static Path {
    static INSPECTOR_BIN: OnceLock<PathBuf> = OnceLock::new();
    INSPECTOR_BIN.get_or_init(|| {
        let prefix = folder("TOOLCTL_TEST_INSPECTOR", "test-inspector");
        ensure(&prefix, INSPECTOR, |prefix| npm_install(prefix, INSPECTOR));
        prefix.join("node_modules/.bin/mcp-inspector")
    })
}

/// The reference server (pinned: the tests assert on its tools).
pub const EVERYTHING: &str = "@modelcontextprotocol/server-everything@2026.8.31";

/// The reference server's program (`mcp-server-everything`, stdio by default), installed
/// first if needed.
pub fn everything() -> &'static Path {
    static EVERYTHING_BIN: OnceLock<PathBuf> = OnceLock::new();
    EVERYTHING_BIN.get_or_init(|| {
        let prefix = folder("TOOLCTL_TEST_EVERYTHING", "test-everything");
        ensure(&prefix, EVERYTHING, |prefix| {
            npm_install(prefix, EVERYTHING)
        });
        prefix.join("node_modules/.bin/mcp-server-everything")
    })
}

fn npm_install(prefix: &Path, package: &str) {
    run(Command::new("npm")
        .args([
            "install",
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            "--prefix",
        ])
        .arg(prefix)
        .arg(package));
}

/// `$var`, else `target/<name>`.
pub fn folder(var: &str, name: &str) -> PathBuf {
    std::env::var_os(var).map_or_else(
        || {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("target")
                .join(name)
        },
        PathBuf::from,
    )
}

/// Make `dir` with `make` unless its marker for `what` says it is made.
pub fn ensure(dir: &Path, what: &str, make: impl FnOnce(&Path)) {
    let marker = dir.join(format!(".toolctl-ready-{}", what.replace('/', "+")));
    if marker.is_file() {
        return;
    }
    let parent = dir.parent().unwrap();
    std::fs::create_dir_all(parent).unwrap();
    let name = dir.file_name().unwrap().to_string_lossy();
    let lock = File::create(parent.join(format!(".{name}.lock"))).unwrap();
    lock.lock().unwrap();
    if marker.is_file() {
        return;
    }
    std::fs::create_dir_all(dir).unwrap();
    make(dir);
    std::fs::write(marker, "").unwrap();
}

pub fn run(command: &mut Command) {
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
