//! A real Letta server (PyPI `letta==0.11.7`, with its embedded SQLite) for the tests of
//! agents on Letta: one server a test process, started on first use and stopped when the
//! process ends; each test makes agents of its own.
//!
//! The server's venv is made by `.ci/run` (about 9 minutes the first time, with the pins of
//! `tests/letta/constraints.txt`) under its cache folder, named by `$TOOLCTL_TEST_LETTA_VENV`;
//! without that variable, `~/.cache/toolctl-ci/venv-letta-0.11.7`. A test that finds no venv
//! fails with `CI=true` (CI made it first) and otherwise says so loudly and returns early.

use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The Letta release tested: the last with an embedded database.
pub const LETTA: &str = "letta==0.11.7";

/// Runs `argv[1:]`, and once standard input ends kills it and removes its working folder
/// (the server's home).
const WATCHDOG: &str = "\
import os, signal, sys
pid = os.fork()
if pid == 0:
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.execv(sys.argv[1], sys.argv[1:])
sys.stdin.buffer.read()
os.kill(pid, signal.SIGKILL)
os.waitpid(pid, 0)
import shutil
shutil.rmtree(os.getcwd(), ignore_errors=True)
";

/// A running Letta server.
pub struct Letta {
    /// `http://127.0.0.1:PORT`
    pub url: String,
    pub port: u16,
}

/// The venv that holds Letta, if it is made.
fn venv() -> Option<PathBuf> {
    let dir = std::env::var_os("TOOLCTL_TEST_LETTA_VENV")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .map(|h| PathBuf::from(h).join(".cache/toolctl-ci/venv-letta-0.11.7"))
        })?;
    dir.join(format!(".toolctl-ready-{LETTA}"))
        .is_file()
        .then_some(dir)
}

/// The server, started first if need be; `None` (after a loud line) when Letta is not
/// installed outside CI. With `CI=true` a missing Letta fails the test.
pub fn server() -> Option<&'static Letta> {
    static SERVER: OnceLock<Option<Letta>> = OnceLock::new();
    SERVER
        .get_or_init(|| {
            let Some(venv) = venv() else {
                let why = format!(
                    "no Letta server to test against: {LETTA} is not installed (.ci/run makes its venv; set TOOLCTL_TEST_LETTA_VENV to one)"
                );
                assert!(std::env::var("CI").as_deref() != Ok("true"), "{why}");
                eprintln!("\n*** SKIPPED: {why} ***\n");
                return None;
            };
            Some(start(&venv))
        })
        .as_ref()
}

/// Start Letta from `venv` on a free port and wait until it answers.
fn start(venv: &std::path::Path) -> Letta {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    // Its home (database, logs) and working folder (it writes its OpenAPI document there).
    let home = tempfile::Builder::new()
        .prefix("toolctl-letta-")
        .tempdir()
        .unwrap()
        .keep();
    // The server dies with the test process: a small Python parent runs it and kills it when
    // its standard input, a pipe the test process holds open, reaches its end (the process
    // ended, however it ended).
    let mut command = Command::new(venv.join("bin/python"));
    command
        .args(["-c", WATCHDOG])
        .arg(venv.join("bin/letta"))
        .args(["server", "--host", "127.0.0.1", "--port", &port.to_string()])
        .env("HOME", &home)
        .current_dir(&home)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(home.join("server.log")).unwrap());
    let (tell, started) = mpsc::channel::<std::io::Result<u32>>();
    std::thread::spawn(move || {
        let child: std::io::Result<Child> = command.spawn();
        match child {
            Ok(child) => {
                let _ = tell.send(Ok(child.id()));
                // Hold the watchdog's standard input open until the process ends.
                let _held = child;
                loop {
                    std::thread::park();
                }
            }
            Err(e) => {
                let _ = tell.send(Err(e));
            }
        }
    });
    started
        .recv()
        .unwrap()
        .unwrap_or_else(|e| panic!("cannot start Letta from {}: {e}", venv.display()));
    let url = format!("http://127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(180);
    let client = client();
    loop {
        if client
            .get(format!("{url}/v1/health/"))
            .send()
            .is_ok_and(|r| r.status().is_success())
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "Letta did not answer /v1/health/ within 180 s; its log: {}",
            std::fs::read_to_string(home.join("server.log")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    Letta { url, port }
}

/// toolctl's own client (its crypto provider installed), without redirects.
fn client() -> reqwest::blocking::Client {
    toolctl_lib::base::http::client(reqwest::redirect::Policy::none(), None).unwrap()
}

impl Letta {
    /// A new agent named `name`, its models at a dead port (making one calls neither).
    pub fn new_agent(&self, name: &str) -> String {
        let dead = "http://127.0.0.1:9/v1";
        let body = json!({
            "name": name,
            "llm_config": {
                "model": "gpt-4o-mini", "model_endpoint_type": "openai",
                "model_endpoint": dead, "context_window": 8192
            },
            "embedding_config": {
                "embedding_model": "text-embedding-3-small", "embedding_endpoint_type": "openai",
                "embedding_endpoint": dead, "embedding_dim": 1536
            }
        });
        let agent: Value = self.call(reqwest::Method::POST, "/v1/agents/", Some(body));
        agent["id"].as_str().unwrap().to_owned()
    }

    /// The names of agent `id`'s tools, as Letta lists them.
    pub fn tool_names(&self, id: &str) -> Vec<String> {
        let tools: Value = self.call(
            reqwest::Method::GET,
            &format!("/v1/agents/{id}/tools"),
            None,
        );
        tools
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    }

    /// Agent `id`'s tools, as Letta lists them.
    pub fn tools(&self, id: &str) -> Vec<Value> {
        let tools: Value = self.call(
            reqwest::Method::GET,
            &format!("/v1/agents/{id}/tools"),
            None,
        );
        tools.as_array().unwrap().clone()
    }

    /// `method path` with `body`, which must succeed; its JSON answer.
    pub fn call(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let mut request = client()
            .request(method.clone(), format!("{}{path}", self.url))
            .timeout(Duration::from_secs(60));
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().unwrap();
        let status = response.status();
        let text = response.text().unwrap();
        assert!(status.is_success(), "{method} {path}: {status}: {text}");
        serde_json::from_str(&text).unwrap_or(Value::Null)
    }
}
