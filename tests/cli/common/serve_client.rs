//! A raw JSON-RPC client of `toolctl mcp serve` on its stdio: what the tests that need the
//! server's process itself (its stdin closed, a signal, its stderr) drive it with, where the
//! official clients (`mcp_clients`) hide it.

use crate::common::TestEnv;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// How long an answer, or the end of the server's stdout, may take.
const WAIT: Duration = Duration::from_secs(30);

/// `mcp serve`, initialized; killed if the test fails before it ended.
pub struct ServeClient {
    pub serve: Child,
    /// `None` once closed (the server then ends).
    pub stdin: Option<ChildStdin>,
    /// The server's stdout, a line at a time (read on a thread).
    lines: Receiver<String>,
    /// The id of the next [`call`](Self::call).
    next: u64,
}

impl Drop for ServeClient {
    fn drop(&mut self) {
        if matches!(self.serve.try_wait(), Ok(None)) {
            let _ = self.serve.kill();
            let _ = self.serve.wait();
        }
    }
}

impl ServeClient {
    /// `mcp serve --mode all` on `env`'s catalog with the extra environment `vars` and its
    /// stderr piped (for [`Self::serve`]'s `stderr`).
    pub fn start(env: &TestEnv, vars: &[(&str, &str)]) -> Self {
        let mut command = env.command(&["mcp", "serve", "--mode", "all"]);
        command.envs(vars.iter().copied()).stderr(Stdio::piped());
        Self::spawn(command)
    }

    /// `command` (an `mcp serve`, its stderr set by the caller) started and initialized.
    pub fn spawn(mut command: Command) -> Self {
        let mut serve = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = serve.stdin.take();
        let stdout = BufReader::new(serve.stdout.take().unwrap());
        let (tell, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines().map_while(Result::ok) {
                if tell.send(line).is_err() {
                    break;
                }
            }
        });
        let mut client = Self {
            serve,
            stdin,
            lines,
            next: 1,
        };
        client.send(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"}}}),
        );
        client.answer(0);
        client.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        client
    }

    pub fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// The answer to request `id` (within 30 s; what comes before it is skipped).
    pub fn answer(&mut self, id: u64) -> Value {
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|e| panic!("mcp serve did not answer request {id}: {e}"));
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id {
                return message;
            }
        }
    }

    /// `tools/call` of `name` (the next id): its result.
    pub fn call(&mut self, name: &str, arguments: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}}));
        self.answer(id)["result"].clone()
    }

    /// Every message the server wrote until its stdout closed (within 30 s).
    pub fn rest(&mut self) -> Vec<Value> {
        let deadline = Instant::now() + WAIT;
        let mut messages = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => messages.push(serde_json::from_str(&line).unwrap()),
                Err(RecvTimeoutError::Disconnected) => return messages,
                Err(RecvTimeoutError::Timeout) => panic!("mcp serve's stdout stayed open"),
            }
        }
    }
}
