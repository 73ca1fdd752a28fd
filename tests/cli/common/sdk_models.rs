//! The providers' own Python SDKs (openai, anthropic, google-genai, ollama) as judges of what
//! toolctl sends them: `sdk_models.py` beside this file builds tool calls with their typed
//! models and validates toolctl's answers and exports against them.
//!
//! The venv is made once, as the MCP client's is ([`super::mcp_clients`]): `.ci/run` makes it
//! under its cache and names it with `$TOOLCTL_TEST_SDK_VENV`; without that, under `target/`.

use super::mcp_clients::{ensure, folder, run};
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// The SDKs, pinned: the tests assert on what these versions' models accept. `.ci/run` names
/// the same pins.
pub const SDKS: [&str; 4] = [
    "openai==3.51.0",
    "anthropic==2.10.0",
    "google-genai==3.3.0",
    "ollama==0.6.3",
];

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cli/common/sdk_models.py")
}

/// The venv's `python`, made first if needed.
pub fn python() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| {
        let venv = folder("TOOLCTL_TEST_SDK_VENV", "test-venv-sdks");
        ensure(&venv, &SDKS.join("+"), |venv| {
            if !venv.join("bin/python").is_file() {
                run(Command::new("python3").args(["-m", "venv"]).arg(venv));
            }
            run(Command::new(venv.join("bin/pip"))
                .args(["install", "--quiet", "--disable-pip-version-check"])
                .args(SDKS));
        });
        venv.join("bin/python")
    })
}

/// Tool calls as each SDK serialises a model's answer, by name (see `sdk_models.py`).
pub fn inputs() -> Value {
    let output = Command::new(python())
        .arg(script())
        .arg("inputs")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "sdk_models.py inputs: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// Every problem the SDKs' typed models find in `values` (`(kind, value)`, kinds as
/// `sdk_models.py` names them: `anthropic-messages`, `gemini-tools`, …).
pub fn problems(values: &[(&str, Value)]) -> Vec<String> {
    let request: Vec<Value> = values
        .iter()
        .map(|(kind, value)| serde_json::json!({ "kind": kind, "value": value }))
        .collect();
    let mut child = Command::new(python())
        .arg(script())
        .arg("check")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(Value::Array(request).to_string().as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "sdk_models.py check: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}
